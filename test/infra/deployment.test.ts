/**
 * The deployment in infra/ against the code. Most tests read the ARM template that `npm run check:infra`
 * compiles from the Bicep (./compiled-template.ts); without it (no .NET SDK) they are skipped, saying so,
 * except under CI. The JSON files the Bicep loads, and the azd hook, are read as they are.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { newKeyRingText } from "../../laptop/embedded/key-file.js";
import {
  ORDER_RECOVERY_CONTAINER,
  ORDER_STATE_CONTAINER,
} from "../../src/adapters/cosmos/container-definition.js";
import { AZURE_SETTING_DEFAULTS, loadAzureSettings } from "../../src/config/azure-settings.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../src/config/data-protection.js";
import { CONNECTION_NAMES, QUEUE_NAMES, TIMER_SCHEDULE_SETTINGS } from "../../src/config/names.js";
import { INTEGER_SETTINGS } from "../../src/config/settings.js";
import { ALERT_KINDS } from "../../src/ports/alerts.js";
import { Unresolved } from "./arm-expressions.js";
import { AZD_OWN_VARIABLES, azdServices } from "./azd-project.js";
import {
  type DeployedResource,
  expand,
  loadCompiledTemplate,
  MAIN_PARAMETERS,
  moduleOutput,
} from "./compiled-template.js";
import {
  APP_NEEDS,
  BUILT_IN_ROLES,
  coverageProblems,
  excessRoles,
  hasDefault,
  IDENTITY_FORMS,
  isoDurationMs,
  missingRoles,
  PEEKED_QUEUES,
  type RoleNeed,
  retryHorizonMs,
  roleAssignments,
  schedulePeriodMs,
  secretProblems,
  TRIGGERED_QUEUES,
} from "./deployment-checks.js";
import { PARTNER_NEEDS } from "./partner-checks.js";
import { mayReceive, STOREFRONT_NEEDS } from "./storefront-checks.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const infra = (path: string) => read(join("infra", path));

interface QueueDefinition {
  readonly name: string;
  readonly lockDuration: string;
  readonly maxDeliveryCount: number;
  readonly requiresDuplicateDetection: boolean;
  readonly duplicateDetectionHistoryTimeWindow: string;
  readonly defaultMessageTimeToLive: string;
  readonly deadLetteringOnMessageExpiration: boolean;
}
const DEPLOYER_NEEDS: readonly RoleNeed[] = [
  { scope: "Microsoft.ServiceBus/namespaces", role: BUILT_IN_ROLES.serviceBusDataSender, why: "sas send" },
  {
    scope: "Microsoft.KeyVault/vaults",
    role: BUILT_IN_ROLES.keyVaultSecretsOfficer,
    why: "the postprovision hook writes the data-protection key ring and the partner's access key once",
  },
];

const queues = JSON.parse(infra("queues.json")) as Record<string, QueueDefinition>;

/** Flex Consumption scales an app in after a few idle minutes: a timer that fires more often keeps it up. */
const IDLE_GAP_MS = 5 * 60_000;
const timerProblems = (schedules: readonly string[]) =>
  schedules
    .filter((schedule) => schedulePeriodMs(schedule) < IDLE_GAP_MS)
    .map(
      (schedule) => `${schedule} fires every ${schedulePeriodMs(schedule) / 1000} s: an instance never idles`,
    );
const stateContainer = JSON.parse(infra("state-container.json")) as Record<string, unknown>;
const recoveryContainer = JSON.parse(infra("recovery-container.json")) as Record<string, unknown>;

const compiled = loadCompiledTemplate();
const skipReason = "skipReason" in compiled ? compiled.skipReason : undefined;
if (skipReason) console.warn(`test/infra: the tests of the compiled template are skipped: ${skipReason}`);
const describeCompiled = skipReason ? describe.skip : describe;
const { deployments, resources } =
  "template" in compiled ? expand(compiled.template, MAIN_PARAMETERS) : { deployments: [], resources: [] };

type Properties = Record<string, unknown>;
const propertiesOf = (resource: DeployedResource | undefined) =>
  (resource?.body.properties ?? {}) as Properties;
const deployed = (type: string) => resources.filter((r) => r.type === type && !r.existing);
const one = (type: string, module?: string) => {
  const found = deployed(type).filter((r) => module === undefined || r.module === module);
  if (found.length !== 1)
    throw new Error(`${found.length} resources of type ${type}${module ? ` in ${module}` : ""}`);
  return found[0] as DeployedResource;
};
/** The Function App's site and plan; the storefront has its own (./storefront.test.ts). */
const FUNCTION_APP = "function-app";
const deploymentOf = (module: string) => {
  const found = deployments.find((d) => d.module === module);
  if (!found) throw new Error(`no module deployment ${module}`);
  return found;
};
const shown = (value: unknown) => (value instanceof Unresolved ? value.toString() : value);
const leafName = (value: unknown) =>
  String(value instanceof Unresolved ? value.text : value)
    .split("/")
    .at(-1);

/** The Function App's settings as compiled: a value, or `<expression>` where only the deployment knows it. */
const appSettings = new Map(
  (
    ((propertiesOf(one("Microsoft.Web/sites", FUNCTION_APP)).siteConfig as Properties | undefined)
      ?.appSettings ?? []) as { name: string; value: unknown }[]
  ).map(({ name, value }) => [name, String(shown(value))]),
);

describe("queues.json", () => {
  const definitions = Object.entries(queues);

  it("declares every queue the code uses, under the same keys as QUEUE_NAMES", () => {
    expect(Object.fromEntries(definitions.map(([key, queue]) => [key, queue.name]))).toEqual(QUEUE_NAMES);
  });

  it("remembers message ids for at least the retry horizon of the default settings", () => {
    const horizon = retryHorizonMs();
    expect(Object.values(horizon.parts).every((ms) => ms > 0)).toBe(true);
    for (const [, queue] of definitions) {
      expect(queue.requiresDuplicateDetection, queue.name).toBe(true);
      const window = isoDurationMs(queue.duplicateDetectionHistoryTimeWindow);
      expect(window, queue.name).toBeGreaterThanOrEqual(horizon.totalMs);
      expect(window, `${queue.name}: Service Bus allows at most 7 days`).toBeLessThanOrEqual(7 * 86_400_000);
    }
  });

  it("dead-letters expired messages, and locks within what Service Bus Standard allows", () => {
    for (const [, queue] of definitions) {
      expect(queue.deadLetteringOnMessageExpiration, queue.name).toBe(true);
      const lock = isoDurationMs(queue.lockDuration);
      expect(lock, queue.name).toBeGreaterThanOrEqual(5_000);
      expect(lock, queue.name).toBeLessThanOrEqual(5 * 60_000);
      expect(queue.maxDeliveryCount, queue.name).toBeGreaterThanOrEqual(1);
    }
  });

  it("delivers an Agent request at most as often as the retry budget counts", () => {
    expect(queues.agentRequests?.maxDeliveryCount).toBe(
      INTEGER_SETTINGS.agentRequestMaxDeliveries.defaultValue,
    );
  });
});

describe("state-container.json", () => {
  it("matches ORDER_STATE_CONTAINER: database, id, partition key and indexing policy", () => {
    const { defaultDatabaseName, ...container } = ORDER_STATE_CONTAINER;
    expect(stateContainer).toEqual({ database: defaultDatabaseName, ...container });
  });
});

describe("recovery-container.json", () => {
  it("matches ORDER_RECOVERY_CONTAINER: database, id, partition key and indexing policy", () => {
    const { defaultDatabaseName, ...container } = ORDER_RECOVERY_CONTAINER;
    expect(recoveryContainer).toEqual({ database: defaultDatabaseName, ...container });
  });

  it("names the state container's database, where the app looks for both", () => {
    expect(recoveryContainer.database).toBe(stateContainer.database);
  });
});

describe("check helpers", () => {
  it("measure schedules and durations as the checks assume", () => {
    expect(schedulePeriodMs("*/10 * * * * *")).toBe(10_000);
    expect(schedulePeriodMs("0 */1 * * * *")).toBe(60_000);
    expect(() => schedulePeriodMs("0 30 9 * * 1-5")).toThrow();
    expect(isoDurationMs("P1D")).toBe(86_400_000);
    expect(isoDurationMs("PT1M30S")).toBe(90_000);
    expect(() => isoDurationMs("1 day")).toThrow();
  });
});

describeCompiled("compiled template: resources", () => {
  it("deploys each resource type at one API version, none of them a preview", () => {
    const versions = new Map<string, Set<string>>();
    for (const r of resources) versions.set(r.type, (versions.get(r.type) ?? new Set()).add(r.apiVersion));
    const problems = [...versions]
      .filter(([, set]) => set.size > 1 || [...set].some((v) => v.includes("-preview")))
      .map(([type, set]) => `${type}: ${[...set].join(", ")}`);
    expect(problems).toEqual([]);
  });

  it("runs the app on Flex Consumption (FC1), which needs Microsoft.Web 2023-12-01 or later", () => {
    expect(one("Microsoft.Web/serverfarms", FUNCTION_APP).body.sku).toEqual({
      name: "FC1",
      tier: "FlexConsumption",
    });
    expect(one("Microsoft.Web/sites", FUNCTION_APP).apiVersion >= "2023-12-01").toBe(true);
    expect(propertiesOf(one("Microsoft.Web/sites", FUNCTION_APP)).serverFarmId).toMatch(
      /^resourceId\(Microsoft\.Web\/serverfarms,/,
    );
  });

  it("leaves no local authentication on: keys, SAS, shared keys, SQL logins, publishing credentials", () => {
    const storage = propertiesOf(one("Microsoft.Storage/storageAccounts", "storage"));
    expect([storage.allowSharedKeyAccess, storage.allowBlobPublicAccess, storage.minimumTlsVersion]).toEqual([
      false,
      false,
      "TLS1_2",
    ]);
    const serviceBus = propertiesOf(one("Microsoft.ServiceBus/namespaces"));
    expect([serviceBus.disableLocalAuth, serviceBus.minimumTlsVersion]).toEqual([true, "1.2"]);
    const cosmos = propertiesOf(one("Microsoft.DocumentDB/databaseAccounts"));
    expect([cosmos.disableLocalAuth, cosmos.minimalTlsVersion]).toEqual([true, "Tls12"]);
    expect((cosmos.backupPolicy as Properties).type).toBe("Continuous");
    const sql = propertiesOf(one("Microsoft.Sql/servers"));
    expect((sql.administrators as Properties).azureADOnlyAuthentication).toBe(true);
    expect(sql.minimalTlsVersion).toBe("1.2");
    expect(sql).not.toHaveProperty("administratorLoginPassword");
    expect(propertiesOf(one("Microsoft.Insights/components")).DisableLocalAuth).toBe(true);
    const site = propertiesOf(one("Microsoft.Web/sites", FUNCTION_APP));
    expect(site.httpsOnly).toBe(true);
    expect((site.siteConfig as Properties).ftpsState).toBe("Disabled");
    const publishing = deployed("Microsoft.Web/sites/basicPublishingCredentialsPolicies").filter(
      (r) => r.module === FUNCTION_APP,
    );
    expect(publishing.map((r) => [leafName(r.body.name), propertiesOf(r).allow])).toEqual([
      ["ftp", false],
      ["scm", false],
    ]);
  });

  it("creates every queue of queues.json with all its properties", () => {
    const created = Object.fromEntries(
      deployed("Microsoft.ServiceBus/namespaces/queues").map((r) => [leafName(r.body.name), propertiesOf(r)]),
    );
    const expected = Object.fromEntries(
      Object.values(queues).map(({ name, ...properties }) => [
        name,
        { ...properties, requiresSession: false },
      ]),
    );
    expect(created).toEqual(expected);
  });

  it("creates the state container and the recovery index of their JSON files, in one database", () => {
    const containers = deployed("Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers");
    const databaseResource = one("Microsoft.DocumentDB/databaseAccounts/sqlDatabases");
    expect(containers).toHaveLength(2);
    for (const file of [stateContainer, recoveryContainer]) {
      const { database, ...definition } = file;
      const container = containers.find((c) => leafName(c.body.name) === definition.id);
      expect((propertiesOf(container).resource as Properties) ?? {}, String(definition.id)).toEqual(
        definition,
      );
      expect(propertiesOf(databaseResource).resource).toEqual({ id: database });
      const parent = String(container?.body.name instanceof Unresolved ? container.body.name.text : "")
        .split("/")
        .at(-2);
      expect(parent, String(definition.id)).toBe(database);
    }
  });

  it("creates the deployment package and lease containers, and points the app at them", () => {
    const containers = deployed("Microsoft.Storage/storageAccounts/blobServices/containers")
      .filter((r) => r.module === "storage")
      .map((r) => leafName(r.body.name));
    expect(containers.sort()).toEqual(["deployment-package", "leases"]);
    expect(appSettings.get("SUPERVISOR_LEASE_CONTAINER")).toBe("leases");
    const deployment = (
      (propertiesOf(one("Microsoft.Web/sites", FUNCTION_APP)).functionAppConfig as Properties)
        .deployment as Properties
    ).storage as Properties;
    expect(String(shown(deployment.value))).toMatch(/deployment-package>?$/);
    // With the app's user-assigned identity, which holds Blob Data Owner before the site exists.
    expect(deployment.authentication).toMatchObject({ type: "UserAssignedIdentity" });
    expect(moduleOutput((deployment.authentication as Properties).userAssignedIdentityResourceId)).toBe(
      "app-identity.outputs.id",
    );
  });

  it("locks the state store and the orders database against deletion when protectData is on", () => {
    expect(deployed("Microsoft.Authorization/locks").map((r) => [r.module, propertiesOf(r).level])).toEqual([
      ["cosmos", "CanNotDelete"],
      ["sql", "CanNotDelete"],
    ]);
    const unprotected =
      "template" in compiled
        ? expand(compiled.template, { ...MAIN_PARAMETERS, protectData: false })
        : undefined;
    expect(
      unprotected?.resources.filter(
        (r) => r.type === "Microsoft.Authorization/locks" && r.body.condition === true,
      ),
    ).toEqual([]);
  });
});

describeCompiled("compiled template: app settings", () => {
  it("hold no key, password, SAS or connection string", () => {
    expect(secretProblems(appSettings)).toEqual([]);
  });

  it("set every setting src/config reads that has no default, in its identity-based form", () => {
    expect(coverageProblems(appSettings)).toEqual([]);
  });

  it("cover every setting local.settings.sample.json lists, by name or by its identity-based form", () => {
    const sample = JSON.parse(read("local.settings.sample.json")) as { Values: Record<string, string> };
    const uncovered = Object.keys(sample.Values).filter(
      (name) =>
        !appSettings.has(name) &&
        !hasDefault(name) &&
        !(IDENTITY_FORMS[name]?.every((form) => appSettings.has(form)) ?? false),
    );
    expect(uncovered).toEqual([]);
  });

  it("are accepted by loadAzureSettings, which then connects to everything with the app's identity", () => {
    const env = Object.fromEntries(
      [...appSettings].map(([name, value]) => [
        name,
        name === DATA_PROTECTION_KEYS_SETTING
          ? newKeyRingText(new Date()) // what the platform puts in place of the Key Vault reference
          : value.startsWith("<")
            ? /(Uri|endpoint|URL)$/i.test(name)
              ? "https://resource.example/"
              : "x"
            : value,
      ]),
    );
    const settings = loadAzureSettings(env);
    expect([
      settings.serviceBus.kind,
      settings.cosmos.kind,
      settings.sql.kind,
      settings.storage.kind,
    ]).toEqual(["identity", "identity", "identity", "identity"]);
    expect(settings.pipeline.agentMode).toBe("activity");
  });

  it("take the data-protection key ring and the partner's key from the deployment's Key Vault, by reference", () => {
    const reference = appSettings.get(DATA_PROTECTION_KEYS_SETTING) ?? "";
    expect(reference).toMatch(/^<@Microsoft\.KeyVault\(VaultName=.*;SecretName=data-protection-keys\)>$/);
    expect(appSettings.get("PARTNER_ACCESS_KEY")).toBe(
      reference.replace("data-protection-keys", "partner-access-key"),
    );
    // The vault's name as the key-vault module answers it, the one vault the deployment creates.
    expect(reference).toContain("'Microsoft.Resources/deployments', 'key-vault'");
    expect(reference).toContain(".outputs.name.value");
    expect(propertiesOf(one("Microsoft.KeyVault/vaults"))).toMatchObject({ enableRbacAuthorization: true });
  });

  it("leave the app idle between timer ticks, so that Flex Consumption can scale it in", () => {
    const schedules = Object.values(TIMER_SCHEDULE_SETTINGS).map((name) => appSettings.get(name) ?? "");
    // Every few minutes at most; the code's defaults (every 10 s, every minute) suit a laptop only.
    expect(timerProblems(schedules)).toEqual([]);
    expect(
      timerProblems([AZURE_SETTING_DEFAULTS.STARTER_SCHEDULE, AZURE_SETTING_DEFAULTS.SUPERVISOR_SCHEDULE]),
    ).toEqual([
      "*/10 * * * * * fires every 10 s: an instance never idles",
      "0 */1 * * * * fires every 60 s: an instance never idles",
    ]);
    // The starter and the Supervisor tick together: one wake-up, not two.
    expect(appSettings.get("STARTER_SCHEDULE")).toBe(appSettings.get("SUPERVISOR_SCHEDULE"));
    expect(appSettings.get("RETENTION_SCHEDULE")).toBe(AZURE_SETTING_DEFAULTS.RETENTION_SCHEDULE);
  });

  it("keep the slower schedules' retry horizon within the broker's duplicate detection window", () => {
    const horizon = retryHorizonMs({
      starter: appSettings.get("STARTER_SCHEDULE") ?? "",
      supervisor: appSettings.get("SUPERVISOR_SCHEDULE") ?? "",
    });
    expect(horizon.totalMs).toBeGreaterThan(retryHorizonMs().totalMs);
    for (const queue of Object.values(queues))
      expect(isoDurationMs(queue.duplicateDetectionHistoryTimeWindow), queue.name).toBeGreaterThanOrEqual(
        horizon.totalMs,
      );
  });

  it("keep finished orders as long as the code's default, bounded as the code bounds it", () => {
    expect(appSettings.get("RETENTION_DAYS")).toBe(String(INTEGER_SETTINGS.retentionDays.defaultValue));
  });

  it("pass the Durable Functions task hub a name it accepts", () => {
    expect(appSettings.get("TASKHUB_NAME")).toMatch(/^[A-Za-z][A-Za-z0-9]{2,44}$/);
  });

  it("keep AGENT_REQUEST_MAX_DELIVERIES equal to the agent-requests queue's maximum delivery count", () => {
    expect(appSettings.get("AGENT_REQUEST_MAX_DELIVERIES")).toBe(
      String(queues.agentRequests?.maxDeliveryCount),
    );
  });

  it("take endpoints from the resources deployed alongside, the simulated partner's among them", () => {
    const app = deploymentOf("function-app").parameters;
    expect({
      ServiceBusConnection__fullyQualifiedNamespace: moduleOutput(app.serviceBusNamespace),
      CosmosDb__endpoint: moduleOutput(app.cosmosEndpoint),
      OrdersSql__server: moduleOutput(app.sqlServerFqdn),
      storageAccountName: moduleOutput(app.storageAccountName),
    }).toEqual({
      ServiceBusConnection__fullyQualifiedNamespace: "service-bus.outputs.fullyQualifiedNamespace",
      CosmosDb__endpoint: "cosmos.outputs.endpoint",
      OrdersSql__server: "sql.outputs.fullyQualifiedDomainName",
      storageAccountName: "storage.outputs.name",
    });
    expect(appSettings.get("PARTNER_URL")).toMatch(
      /^<https:\/\/<reference\(.*'Microsoft\.Resources\/deployments', 'partner'\).*\.outputs\.defaultHostName\.value>>$/,
    );
    expect(appSettings.get("AzureWebJobsStorage__blobServiceUri")).toBe(
      "<reference('storage').primaryEndpoints.blob>",
    );
  });

  it("leave FUNCTIONS_WORKER_RUNTIME to the Flex Consumption runtime declaration", () => {
    expect(appSettings.has("FUNCTIONS_WORKER_RUNTIME")).toBe(false);
    const runtime = (propertiesOf(one("Microsoft.Web/sites", FUNCTION_APP)).functionAppConfig as Properties)
      .runtime;
    expect(runtime).toEqual({ name: "node", version: deploymentOf("main").parameters.nodeVersion });
  });
});

describeCompiled("compiled template: identity and roles", () => {
  const assignments = roleAssignments(resources, String(MAIN_PARAMETERS.principalId));

  it("give the app's identity a role on everything the code and the host talk to, as a service principal", () => {
    expect(missingRoles(assignments, "app", APP_NEEDS)).toEqual([]);
    expect(
      assignments
        .filter((a) => a.principal === "app" && a.principalType !== undefined)
        .map((a) => a.principalType),
    ).toEqual(expect.arrayContaining(["ServicePrincipal"]));
    expect(assignments.filter((a) => a.principal === "app" && a.principalType === "User")).toEqual([]);
  });

  it("give nobody a role the code does not need", () => {
    expect(
      excessRoles(assignments, {
        app: APP_NEEDS,
        deployer: DEPLOYER_NEEDS,
        storefront: STOREFRONT_NEEDS,
        partner: PARTNER_NEEDS,
      }),
    ).toEqual([]);
  });

  it("give the app a role that can receive on exactly the queues it reads: its triggers' and the parked one", () => {
    const readable = assignments
      .filter((a) => a.principal === "app" && mayReceive(a.role))
      .map((a) => `${a.scope} ${a.scopeName}`);
    expect(readable.sort()).toEqual(
      [...TRIGGERED_QUEUES, ...PEEKED_QUEUES]
        .map((q) => `Microsoft.ServiceBus/namespaces/queues ${q}`)
        .sort(),
    );
  });

  it("give the app Data Owner on exactly the queues its triggers read, for target-based scaling", () => {
    const owned = assignments
      .filter((a) => a.principal === "app" && a.role === BUILT_IN_ROLES.serviceBusDataOwner)
      .map((a) => `${a.scope} ${a.scopeName}`);
    expect(owned.sort()).toEqual(
      TRIGGERED_QUEUES.map((q) => `Microsoft.ServiceBus/namespaces/queues ${q}`).sort(),
    );
  });

  it("let the deploying principal send orders (sas send), with the principal type azd passes", () => {
    expect(missingRoles(assignments, "deployer", DEPLOYER_NEEDS)).toEqual([]);
    for (const held of assignments.filter((a) => a.principal === "deployer"))
      expect(held.principalType).toBe(MAIN_PARAMETERS.principalType);
  });

  it("assign them to the Function App's user-assigned identity, its only one (./identity.test.ts)", () => {
    expect(Object.keys((one("Microsoft.Web/sites", FUNCTION_APP).body.identity ?? {}) as Properties)).toEqual(
      ["type", "userAssignedIdentities"],
    );
    expect(moduleOutput(deploymentOf("main").outputs.AZURE_FUNCTION_APP_PRINCIPAL_ID)).toBe(
      "app-identity.outputs.principalId",
    );
  });

  it("make the deploying principal the SQL server's Entra administrator", () => {
    const admin = propertiesOf(one("Microsoft.Sql/servers")).administrators as Properties;
    expect([admin.sid, admin.principalType, admin.administratorType]).toEqual([
      MAIN_PARAMETERS.principalId,
      "User",
      "ActiveDirectory",
    ]);
  });
});

describeCompiled("compiled template: alerts", () => {
  const metricAlerts = deployed("Microsoft.Insights/metricAlerts").map((r) => propertiesOf(r));
  const criteria = (alert: Properties) => (alert.criteria as { allOf: Properties[] }).allOf[0] ?? {};

  it("watch every queue's dead-letter count, and the invalid-messages queue for parked messages", () => {
    expect(metricAlerts.map((alert) => [criteria(alert).metricName, criteria(alert).dimensions])).toEqual([
      ["DeadletteredMessages", [{ name: "EntityName", operator: "Include", values: ["*"] }]],
      [
        "ActiveMessages",
        [{ name: "EntityName", operator: "Include", values: [QUEUE_NAMES.invalidMessages] }],
      ],
    ]);
  });

  it("notify the alert email's action group, when one is given", () => {
    for (const alert of metricAlerts) {
      expect(alert.actions).toEqual([
        { actionGroupId: "resourceId(Microsoft.Insights/actionGroups, ag-order-operators)" },
      ]);
    }
    const silent =
      "template" in compiled ? expand(compiled.template, { ...MAIN_PARAMETERS, alertEmail: "" }) : undefined;
    const silentAlerts = silent?.resources.filter((r) => r.type === "Microsoft.Insights/metricAlerts") ?? [];
    expect(silentAlerts.map((r) => propertiesOf(r).actions)).toEqual([[], []]);
  });

  it("query the log line the alert sink writes, for every alert kind not seen on a queue", () => {
    const sink = read("src/adapters/logging/logging-alert-sink.ts");
    const event = /logger\.error\("([^"]+)"/.exec(sink)?.[1] ?? "";
    expect(event).toBe("operator.alert");
    const queries = deployed("Microsoft.Insights/scheduledQueryRules").map((r) =>
      String(criteria(propertiesOf(r)).query),
    );
    for (const query of queries) expect(query).toContain(`tostring(line.event) == "${event}"`);
    // Refused orders are parked on invalid-messages (src/adapters/functions-host/settle.ts): alerted above.
    const parked = ["InvalidMessage", "ConflictingOrder"];
    const queried = new Set(
      queries.flatMap((query) => [...query.matchAll(/"(\w+)"/g)].map((m) => m[1] ?? "")),
    );
    expect(ALERT_KINDS.filter((kind) => !parked.includes(kind) && !queried.has(kind))).toEqual([]);
  });
});

describeCompiled("compiled template: azd wiring", () => {
  const outputs = () => deploymentOf("main").outputs;

  it("deploys the one Functions service azure.yaml names to the app tagged with its name", () => {
    const functions = azdServices(read("azure.yaml")).filter((s) => s.properties.host === "function");
    expect(functions.map((s) => s.properties)).toEqual([
      // Built here into its own folder, deployed as built (./function-package.test.ts, ./azd-services.test.ts).
      { project: ".build/function-app", language: "js", host: "function", remoteBuild: "false" },
    ]);
    expect(one("Microsoft.Web/sites", FUNCTION_APP).body.tags).toEqual({
      "azd-env-name": MAIN_PARAMETERS.environmentName,
      "azd-service-name": functions[0]?.name,
    });
  });

  it("takes from main.parameters.json only parameters main.bicep declares, and every required one", () => {
    const file = JSON.parse(infra("main.parameters.json")) as { parameters: Record<string, unknown> };
    const declared = ("template" in compiled ? compiled.template.parameters : undefined) ?? {};
    const given = Object.keys(file.parameters);
    expect(given.filter((name) => !(name in declared))).toEqual([]);
    expect(
      Object.entries(declared).filter(([name, p]) => !("defaultValue" in p) && !given.includes(name)),
    ).toEqual([]);
  });

  it("outputs what the post-provision hook and `sas send` read", () => {
    expect(moduleOutput(outputs()[`${CONNECTION_NAMES.serviceBus}__fullyQualifiedNamespace`])).toBe(
      "service-bus.outputs.fullyQualifiedNamespace",
    );
    const hook = /postprovision:[\s\S]*?run:\s*(\S+)/.exec(read("azure.yaml"))?.[1] ?? "";
    expect(hook).toBe("./infra/scripts/postprovision.sh");
    const steps = [...read(hook).matchAll(/"\$script_dir\/([\w-]+\.sh)"/g)].map(
      (m) => `infra/scripts/${m[1]}`,
    );
    expect(steps).toEqual([
      "infra/scripts/create-data-protection-keys.sh",
      "infra/scripts/create-partner-access-key.sh",
      "infra/scripts/refresh-key-vault-references.sh",
      "infra/scripts/grant-sql-access.sh",
    ]);
    const used = steps.flatMap((step) =>
      [...read(step).matchAll(/\$\{(AZURE_\w+)[:}]/g)].map((m) => m[1] ?? ""),
    );
    expect(used.length).toBeGreaterThan(0);
    // azd writes its own (the subscription, the environment, the region) into every environment.
    const azdOwn = [...AZD_OWN_VARIABLES, "AZURE_SUBSCRIPTION_ID"];
    expect(used.filter((name) => !(name in outputs()) && !azdOwn.includes(name))).toEqual([]);
    // The app's user-assigned identity: its client id is an output of its own resource, no lookup needed.
    expect(moduleOutput(outputs().AZURE_FUNCTION_APP_CLIENT_ID)).toBe("app-identity.outputs.clientId");
    expect(resources.filter((r) => r.type === "Microsoft.ManagedIdentity/identities")).toEqual([]);
  });
});

describeCompiled("the checks catch a doctored deployment", () => {
  it("a connection string with a shared access key", () => {
    const doctored = new Map(appSettings);
    doctored.set("ServiceBusConnection", "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKey=abc");
    expect(secretProblems(doctored)).toEqual([
      "ServiceBusConnection: holds a connection string or key when set",
      "ServiceBusConnection: its value looks like a secret: Endpoint=sb://x.servicebus.windows.net/;SharedAccessKey=abc",
    ]);
  });

  it("a key fetched with listKeys(), and a Cosmos DB key", () => {
    const doctored = new Map(appSettings);
    doctored.set(
      "CosmosDb__key",
      "<listKeys(resourceId('Microsoft.DocumentDB/databaseAccounts', 'x')).primaryMasterKey>",
    );
    expect(secretProblems(doctored)).toHaveLength(2);
  });

  it("a required setting left out", () => {
    const doctored = new Map(appSettings);
    doctored.delete("CosmosDb__endpoint");
    doctored.delete("AzureWebJobsStorage__tableServiceUri");
    doctored.delete("SUPERVISOR_SCHEDULE");
    expect(coverageProblems(doctored)).toEqual([
      "SUPERVISOR_SCHEDULE: resolved by the Functions host, so it must be set",
      "CosmosDb__endpoint: read by src/config, but neither set by the Bicep nor defaulted in code",
      "CosmosDb__key: its identity-based form needs CosmosDb__endpoint",
      "AzureWebJobsStorage: its identity-based form needs AzureWebJobsStorage__tableServiceUri",
    ]);
  });

  it("a misspelt setting, and one Flex Consumption does not take", () => {
    const doctored = new Map(appSettings);
    doctored.set("PARTNER_URI", "https://partner.example");
    doctored.set("FUNCTIONS_WORKER_RUNTIME", "node");
    expect(coverageProblems(doctored)).toEqual([
      "PARTNER_URI: set by the Bicep, but nothing reads it",
      "FUNCTIONS_WORKER_RUNTIME: not an app setting on Flex Consumption",
    ]);
  });

  it("a setting for a local host only", () => {
    const doctored = new Map(appSettings);
    doctored.set("OrdersSql__sqliteFile", "/home/site/orders.db");
    expect(coverageProblems(doctored)).toEqual([
      "OrdersSql__sqliteFile: a setting of the laptop's host, not the app's",
    ]);
  });

  it("the triggered queues without Data Owner, as before (Receiver and Sender only)", () => {
    const before = roleAssignments(resources, String(MAIN_PARAMETERS.principalId)).filter(
      (a) => a.role !== BUILT_IN_ROLES.serviceBusDataOwner,
    );
    expect(missingRoles(before, "app", APP_NEEDS)).toEqual(
      TRIGGERED_QUEUES.map(
        (queue) =>
          `app lacks role ${BUILT_IN_ROLES.serviceBusDataOwner} on Microsoft.ServiceBus/namespaces/queues ${queue} (the scale controller reads the triggered queue's length (Manage right))`,
      ),
    );
  });

  it("a role assignment dropped, and a role id mistyped", () => {
    const tableRole = BUILT_IN_ROLES.storageTableDataContributor;
    const doctored = resources
      .filter(
        (r) => !String((r.body.properties as Properties | undefined)?.roleDefinitionId).includes(tableRole),
      )
      .map((r) =>
        JSON.stringify(r.body).includes(BUILT_IN_ROLES.serviceBusDataSender) && r.module === "access"
          ? {
              ...r,
              body: {
                ...r.body,
                properties: {
                  ...propertiesOf(r),
                  roleDefinitionId: `subscriptionResourceId(Microsoft.Authorization/roleDefinitions, 69a216fc-b8fb-44d8-bc22-1f3c2cd27a38)`,
                },
              },
            }
          : r,
      );
    expect(
      missingRoles(roleAssignments(doctored, String(MAIN_PARAMETERS.principalId)), "app", APP_NEEDS),
    ).toEqual([
      `app lacks role ${tableRole} on Microsoft.Storage/storageAccounts (task hub history and instances tables)`,
      `app lacks role ${BUILT_IN_ROLES.serviceBusDataSender} on Microsoft.ServiceBus/namespaces (agent requests and replies, status messages, parked messages, POST /api/orders)`,
    ]);
  });
});
