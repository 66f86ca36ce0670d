import { describe, expect, it } from "vitest";
import { loadPartnerSettings, PartnerSettingsError } from "../../partner/settings.js";

const KEY = "a-partner-key-of-some-length";
const CONNECTION =
  "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;";

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadPartnerSettings(env);
  } catch (error) {
    expect(error).toBeInstanceOf(PartnerSettingsError);
    return (error as PartnerSettingsError).problems;
  }
  throw new Error("the settings were accepted");
}

describe("the stand-alone partner's settings", () => {
  it("takes a container URL for the managed identity, and defaults the rest", () => {
    const settings = loadPartnerSettings({
      PARTNER_ACCESS_KEY: KEY,
      PARTNER_LEDGER_CONTAINER_URL: "https://sasdemo.blob.core.windows.net/partner-ledger",
    });
    expect(settings).toEqual({
      port: 7072,
      host: "0.0.0.0",
      accessKey: KEY,
      books: { kind: "containerUrl", url: "https://sasdemo.blob.core.windows.net/partner-ledger" },
      faults: { transient: 0.1, permanent: 0.01, slow: 0.03, lostReply: 0.01 },
      slowMs: 15_000,
      seed: 7,
    });
  });

  it("takes a user-assigned identity, a connection string or a file, and every other setting", () => {
    expect(
      loadPartnerSettings({
        PARTNER_ACCESS_KEY: KEY,
        PARTNER_LEDGER_CONTAINER_URL: "https://sasdemo.blob.core.windows.net/partner-ledger",
        AZURE_CLIENT_ID: "00000000-0000-0000-0000-000000000001",
      }).books,
    ).toEqual({
      kind: "containerUrl",
      url: "https://sasdemo.blob.core.windows.net/partner-ledger",
      clientId: "00000000-0000-0000-0000-000000000001",
    });
    const settings = loadPartnerSettings({
      PARTNER_ACCESS_KEY: KEY,
      PARTNER_LEDGER_CONNECTION_STRING: CONNECTION,
      PARTNER_LEDGER_CONTAINER: "books-2",
      PORT: "8080",
      PARTNER_HOST: "127.0.0.1",
      PARTNER_FAULT_TRANSIENT: "0",
      PARTNER_FAULT_PERMANENT: "0.5",
      PARTNER_FAULT_SLOW: ".25",
      PARTNER_FAULT_LOST_REPLY: "0.25",
      PARTNER_SLOW_MS: "0",
      PARTNER_SEED: "-3",
    });
    expect(settings).toEqual({
      port: 8080,
      host: "127.0.0.1",
      accessKey: KEY,
      books: { kind: "connectionString", connectionString: CONNECTION, container: "books-2" },
      faults: { transient: 0, permanent: 0.5, slow: 0.25, lostReply: 0.25 },
      slowMs: 0,
      seed: -3,
    });
    expect(
      loadPartnerSettings({ PARTNER_ACCESS_KEY: KEY, PARTNER_LEDGER_FILE: ".data/partner.sqlite" }).books,
    ).toEqual({ kind: "file", path: ".data/partner.sqlite" });
  });

  it.each([
    ["PORT", { PORT: "80a" }, 'PORT must be a whole number from 0 to 65535; got "80a"'],
    ["PORT", { PORT: "70000" }, "PORT must be a whole number from 0 to 65535"],
    ["PARTNER_SLOW_MS", { PARTNER_SLOW_MS: "-1" }, "PARTNER_SLOW_MS must be a whole number"],
    ["PARTNER_SEED", { PARTNER_SEED: "1.5" }, "PARTNER_SEED must be a whole number"],
    [
      "PARTNER_FAULT_TRANSIENT",
      { PARTNER_FAULT_TRANSIENT: "1.5" },
      "PARTNER_FAULT_TRANSIENT must be a rate from 0 to 1",
    ],
    [
      "PARTNER_FAULT_PERMANENT",
      { PARTNER_FAULT_PERMANENT: "-0.1" },
      "PARTNER_FAULT_PERMANENT must be a rate",
    ],
    [
      "PARTNER_FAULT_SLOW",
      { PARTNER_FAULT_SLOW: "often" },
      'PARTNER_FAULT_SLOW must be a rate from 0 to 1; got "often"',
    ],
    [
      "PARTNER_FAULT_LOST_REPLY",
      { PARTNER_FAULT_LOST_REPLY: "NaN" },
      "PARTNER_FAULT_LOST_REPLY must be a rate",
    ],
    [
      "the four rates",
      { PARTNER_FAULT_TRANSIENT: "0.6", PARTNER_FAULT_PERMANENT: "0.5" },
      "PARTNER_FAULT_TRANSIENT + PARTNER_FAULT_PERMANENT + PARTNER_FAULT_SLOW + PARTNER_FAULT_LOST_REPLY must be at most 1",
    ],
    [
      "PARTNER_LEDGER_CONTAINER",
      {
        PARTNER_LEDGER_FILE: "",
        PARTNER_LEDGER_CONNECTION_STRING: CONNECTION,
        PARTNER_LEDGER_CONTAINER: "Books",
      },
      'PARTNER_LEDGER_CONTAINER must be a container name (3 to 63 lowercase letters, digits and single hyphens); got "Books"',
    ],
    [
      "PARTNER_LEDGER_CONNECTION_STRING",
      { PARTNER_LEDGER_FILE: "", PARTNER_LEDGER_CONNECTION_STRING: "http://127.0.0.1:10000" },
      "PARTNER_LEDGER_CONNECTION_STRING must be a storage connection string",
    ],
    [
      "PARTNER_LEDGER_CONTAINER_URL",
      {
        PARTNER_LEDGER_FILE: "",
        PARTNER_LEDGER_CONTAINER_URL: "http://sasdemo.blob.core.windows.net/partner-ledger",
      },
      "PARTNER_LEDGER_CONTAINER_URL must be the https URL of a blob container",
    ],
    [
      "PARTNER_LEDGER_CONTAINER without a connection string",
      { PARTNER_LEDGER_CONTAINER: "books" },
      "PARTNER_LEDGER_CONTAINER goes with PARTNER_LEDGER_CONNECTION_STRING only",
    ],
  ])("names %s when it is wrong", (_, wrong, message) => {
    const env: Record<string, string> = {
      PARTNER_ACCESS_KEY: KEY,
      PARTNER_LEDGER_FILE: "partner.sqlite",
      ...wrong,
    };
    expect(problems(env).join("\n")).toContain(message);
  });

  it("requires the access key, and refuses a Key Vault reference App Service could not resolve", () => {
    expect(problems({ PARTNER_LEDGER_FILE: "p.sqlite" })).toEqual([
      "PARTNER_ACCESS_KEY is required: the key every caller must send",
    ]);
    expect(problems({ PARTNER_LEDGER_FILE: "p.sqlite", PARTNER_ACCESS_KEY: "  " })).toEqual([
      "PARTNER_ACCESS_KEY is required: the key every caller must send",
    ]);
    const reference = "@Microsoft.KeyVault(SecretUri=https://sas-kv.vault.azure.net/secrets/partner-key/)";
    expect(problems({ PARTNER_LEDGER_FILE: "p.sqlite", PARTNER_ACCESS_KEY: reference })).toEqual([
      "PARTNER_ACCESS_KEY is an unresolved Key Vault reference: give the app's identity access to the secret",
    ]);
  });

  it("takes exactly one place for the books, and names every wrong setting at once", () => {
    expect(problems({ PARTNER_ACCESS_KEY: KEY })).toEqual([
      "the books: set exactly one of PARTNER_LEDGER_CONTAINER_URL, PARTNER_LEDGER_CONNECTION_STRING or PARTNER_LEDGER_FILE; none is set",
    ]);
    const two = problems({
      PARTNER_ACCESS_KEY: KEY,
      PARTNER_LEDGER_FILE: "p.sqlite",
      PARTNER_LEDGER_CONNECTION_STRING: CONNECTION,
    });
    expect(two.join("\n")).toContain("set exactly one of");
    expect(two.join("\n")).toContain("2 are set");
    const all = problems({ PORT: "x", PARTNER_SEED: "y", PARTNER_FAULT_SLOW: "z" });
    expect(all.map((problem) => problem.split(" ")[0])).toEqual([
      "PORT",
      "PARTNER_ACCESS_KEY",
      "the",
      "PARTNER_FAULT_SLOW",
      "PARTNER_SEED",
    ]);
  });
});
