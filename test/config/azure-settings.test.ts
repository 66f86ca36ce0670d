import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newKeyRingText } from "../../laptop/embedded/key-file.js";
import {
  AZURE_SETTING_NAMES,
  HOSTED_ORDERS,
  hostedOrders,
  loadAzureSettings,
} from "../../src/config/azure-settings.js";
import {
  BREAKER_ENABLED_SETTING,
  BREAKER_NUMBER_SETTINGS,
  BREAKER_SETTING_NAMES,
} from "../../src/config/breaker-settings.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../src/config/data-protection.js";
import { HOST_SETTING_NAMES } from "../../src/config/names.js";
import {
  AGENT_MODE_SETTING,
  INTEGER_SETTINGS,
  ON_RECOVERIES_EXHAUSTED_SETTING,
  SettingsError,
} from "../../src/config/settings.js";

const sampleFile = (
  JSON.parse(readFileSync(join(import.meta.dirname, "../../local.settings.sample.json"), "utf8")) as {
    Values: Record<string, string>;
  }
).Values;
/** The sample with a key ring, which it leaves empty: a key ring is a secret. */
const sample: Record<string, string> = {
  ...sampleFile,
  [DATA_PROTECTION_KEYS_SETTING]: newKeyRingText(new Date()),
};
const keys = { [DATA_PROTECTION_KEYS_SETTING]: sample[DATA_PROTECTION_KEYS_SETTING] ?? "" };

const identityBased = {
  ServiceBusConnection__fullyQualifiedNamespace: "sb-orders.servicebus.windows.net",
  CosmosDb__endpoint: "https://cosmos-orders.documents.azure.com:443/",
  OrdersSql__server: "sql-orders.database.windows.net",
  OrdersSql__database: "orders",
  AzureWebJobsStorage__blobServiceUri: "https://storders.blob.core.windows.net",
  PARTNER_URL: "https://partner.example.com",
  ...keys,
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadAzureSettings(env);
  } catch (error) {
    if (error instanceof SettingsError) return [...error.problems];
    throw error;
  }
  return [];
}

describe("loadAzureSettings", () => {
  it("accepts local.settings.sample.json: connection strings and the emulator's key", () => {
    const settings = loadAzureSettings(sample);
    expect(settings.serviceBus.kind).toBe("connectionString");
    expect(settings.cosmos).toMatchObject({ kind: "key", allowSelfSignedCertificate: true });
    expect(settings.sql.kind).toBe("connectionString");
    expect(settings.storage.kind).toBe("connectionString");
  });

  it("chooses identity-based connections when only endpoints are given, with the documented defaults", () => {
    const settings = loadAzureSettings(identityBased);
    expect(settings).toMatchObject({
      serviceBus: { kind: "identity", fullyQualifiedNamespace: "sb-orders.servicebus.windows.net" },
      cosmos: { kind: "identity", endpoint: "https://cosmos-orders.documents.azure.com:443/" },
      sql: { kind: "identity", server: "sql-orders.database.windows.net", database: "orders" },
      storage: { kind: "identity", blobServiceUri: "https://storders.blob.core.windows.net" },
      cosmosDatabase: "orders",
      leaseContainer: "leases",
      supervisorSchedule: "0 */1 * * * *",
    });
  });

  it("takes the orders table a host hands it in place of SQL Server, and refuses both at once", () => {
    const { OrdersSql: _, ...withoutSql } = sample;
    const slot = globalThis as { [HOSTED_ORDERS]?: unknown };
    slot[HOSTED_ORDERS] = { insertIfAbsent: async () => "inserted", get: async () => undefined };
    try {
      expect(hostedOrders()).toBe(slot[HOSTED_ORDERS]);
      expect(loadAzureSettings(withoutSql).sql).toEqual({ kind: "hosted" });
      expect(problemsOf(sample)).toEqual([
        "OrdersSql: the host handed the app an orders table of its own; remove the OrdersSql settings or have the host hand none",
      ]);
    } finally {
      delete slot[HOSTED_ORDERS];
    }
    expect(problemsOf(withoutSql)).toEqual([
      "SQL connection: set OrdersSql or OrdersSql__server with OrdersSql__database",
    ]);
    // The app no longer reads the file setting `sas host` used to pass it.
    expect(AZURE_SETTING_NAMES).not.toContain("OrdersSql__sqliteFile");
  });

  it("names a setting App Service left as an unresolved Key Vault reference, and how to resolve it", () => {
    const reference = "@Microsoft.KeyVault(VaultName=kv-orders;SecretName=data-protection-keys)";
    expect(problemsOf({ ...identityBased, DATA_PROTECTION_KEYS: reference })).toEqual([
      "DATA_PROTECTION_KEYS: an unresolved Key Vault reference; App Service could not read the secret it names (the app's identity lacks Key Vault Secrets User on the vault, the role is still applying, or the secret does not exist yet). Once it can, have App Service fetch it again: azd hooks run postprovision",
    ]);
    const both = problemsOf({
      ...identityBased,
      DATA_PROTECTION_KEYS: reference,
      PARTNER_ACCESS_KEY: reference.replace("data-protection-keys", "partner-access-key"),
    });
    expect(both.map((problem) => problem.split(":")[0])).toEqual([
      "PARTNER_ACCESS_KEY",
      "DATA_PROTECTION_KEYS",
    ]);
  });

  it("names every missing connection, and both ways to give it", () => {
    const problems = problemsOf({});
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/ServiceBusConnection or ServiceBusConnection__fullyQualifiedNamespace/),
        expect.stringMatching(/CosmosDb__endpoint/),
        expect.stringMatching(/OrdersSql or OrdersSql__server with OrdersSql__database/),
        expect.stringMatching(/AzureWebJobsStorage or AzureWebJobsStorage__blobServiceUri/),
        expect.stringMatching(/PARTNER_URL/),
        expect.stringMatching(/DATA_PROTECTION_KEYS: missing; set a key ring/),
      ]),
    );
  });

  it.each([
    ["CosmosDb__endpoint", "http://cosmos:8081", /CosmosDb__endpoint.*https: URL/],
    ["PARTNER_URL", "not a url", /PARTNER_URL/],
    ["SUPERVISOR_SCHEDULE", "*/5 * * * *", /SUPERVISOR_SCHEDULE.*six-field.*has 5 fields/],
    ["STARTER_SCHEDULE", "*/10 * 24 * * *", /STARTER_SCHEDULE.*hour field "24": 24 is outside 0-23/],
    ["SUPERVISOR_LEASE_CONTAINER", "Leases_", /SUPERVISOR_LEASE_CONTAINER/],
    ["CosmosDb__allowSelfSignedCertificate", "true", /only for the emulator/],
    ["STEP_TIMEOUT_MS", "soon", /STEP_TIMEOUT_MS/],
    ["DATA_PROTECTION_KEYS", "k1:c2hvcnQ=", /DATA_PROTECTION_KEYS: key k1 is not 32 bytes of base64/],
    ["DATA_PROTECTION_KEYS", "no id", /DATA_PROTECTION_KEYS: key 1 needs an id/],
    ["DATA_PROTECTION_KEYS", `k1:${"A".repeat(43)}=,k1:${"B".repeat(43)}=`, /key id k1 is given twice/],
  ])("refuses %s=%s with a message naming it", (name, value, message) => {
    expect(problemsOf({ ...identityBased, [name]: value })).toEqual([expect.stringMatching(message)]);
  });

  it("reads the partner's access key for the Agents, and refuses a Key Vault reference App Service left unresolved", () => {
    expect(loadAzureSettings(identityBased).pipeline.partnerAccessKey).toBeUndefined();
    const keyed = loadAzureSettings({ ...identityBased, PARTNER_ACCESS_KEY: " s3cr3t-key " });
    expect(keyed.pipeline.partnerAccessKey).toBe("s3cr3t-key");
    const reference = "@Microsoft.KeyVault(VaultName=kv-orders;SecretName=partner-access-key)";
    expect(problemsOf({ ...identityBased, PARTNER_ACCESS_KEY: reference })).toEqual([
      "PARTNER_ACCESS_KEY: an unresolved Key Vault reference; check that the app's identity may read the secret it names",
    ]);
  });

  it("keeps local.settings.sample.json in step with the settings the code reads", () => {
    const read = [
      ...AZURE_SETTING_NAMES,
      ...HOST_SETTING_NAMES,
      AGENT_MODE_SETTING,
      ON_RECOVERIES_EXHAUSTED_SETTING,
      ...Object.values(INTEGER_SETTINGS).map((s) => s.name),
      ...BREAKER_SETTING_NAMES,
    ];
    const optionalInSample = new Set([
      "ServiceBusConnection__fullyQualifiedNamespace",
      "OrdersSql__server",
      "OrdersSql__database",
      "AzureWebJobsStorage__blobServiceUri",
      // Optional, and a secret: a local partner stand-in gets one generated (sas host).
      "PARTNER_ACCESS_KEY",
    ]);
    for (const name of read)
      if (!optionalInSample.has(name)) expect(Object.keys(sample), name).toContain(name);
    for (const name of Object.keys(sample))
      expect(read, `${name} is in the sample but nothing reads it`).toContain(name);
  });

  it("gives the circuit breaker settings their defaults in local.settings.sample.json", () => {
    expect(sample[BREAKER_ENABLED_SETTING]).toBe("true");
    for (const setting of Object.values(BREAKER_NUMBER_SETTINGS))
      expect(sample[setting.name], setting.name).toBe(String(setting.defaultValue));
  });
});
