/**
 * The deployment in infra/ against the code. Bicep cannot be compiled here, so these tests read the
 * templates as text (./bicep-text.ts) and the JSON files they load; what they cannot see is listed in the
 * README's "Deploy to Azure" section.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ORDER_STATE_CONTAINER } from "../../src/adapters/cosmos/container-definition.js";
import { AZURE_SETTING_DEFAULTS, loadAzureSettings } from "../../src/config/azure-settings.js";
import { CONNECTION_NAMES, QUEUE_NAMES } from "../../src/config/names.js";
import { INTEGER_SETTINGS } from "../../src/config/settings.js";
import { ALERT_KINDS } from "../../src/ports/alerts.js";
import {
  arrayElements,
  declaration,
  declarations,
  entryAt,
  firstObject,
  objectEntries,
  strayStatements,
  stringLiteral,
} from "./bicep-text.js";
import {
  APP_NEEDS,
  BUILT_IN_ROLES,
  coverageProblems,
  hasDefault,
  IDENTITY_FORMS,
  isoDurationMs,
  missingRoles,
  retryHorizonMs,
  roleAssignments,
  schedulePeriodMs,
  secretProblems,
} from "./deployment-checks.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const infra = (path: string) => read(join("infra", path));

const main = infra("main.bicep");
const functionAppBicep = infra("modules/function-app.bicep");
const accessBicep = infra("modules/access.bicep");
const alertsBicep = infra("modules/alerts.bicep");

interface QueueDefinition {
  readonly name: string;
  readonly lockDuration: string;
  readonly maxDeliveryCount: number;
  readonly requiresDuplicateDetection: boolean;
  readonly duplicateDetectionHistoryTimeWindow: string;
  readonly defaultMessageTimeToLive: string;
  readonly deadLetteringOnMessageExpiration: boolean;
}
const queues = JSON.parse(infra("queues.json")) as Record<string, QueueDefinition>;
const stateContainer = JSON.parse(infra("state-container.json")) as Record<string, unknown>;

/** The Function App's settings: `{ name: '...', value: <expression> }` entries of the appSettings list. */
const appSettings = new Map(
  arrayElements(declaration(functionAppBicep, "var", "appSettings").value).map((element) => {
    const entries = objectEntries(element);
    return [stringLiteral(entries.get("name") ?? "") ?? `<${element}>`, entries.get("value") ?? ""];
  }),
);
const moduleParams = (symbol: string) =>
  objectEntries(entryAt(declaration(main, "module", symbol).value, "params"));
const functionAppParams = moduleParams("functionApp");
const mainVar = (name: string) => {
  const found = declarations(main).find((d) => d.keyword === "var" && d.name === name);
  return found ? stringLiteral(found.value) : undefined;
};

/** A setting's value where the templates fix it (a literal, or a literal passed down from main.bicep). */
function literalValue(expression: string): string | undefined {
  const direct = stringLiteral(expression);
  if (direct !== undefined) return direct;
  const passed = functionAppParams.get(expression);
  if (passed === undefined) return undefined;
  return stringLiteral(passed) ?? (/^\w+$/.test(passed) ? mainVar(passed) : undefined);
}

describe("app settings", () => {
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
      [...appSettings].map(([name, expression]) => {
        const integer = Object.values(INTEGER_SETTINGS).find((setting) => setting.name === name);
        const placeholder = /(Uri|endpoint|URL)$/i.test(name)
          ? "https://resource.example/"
          : `value-of-${name}`;
        const codeDefault = (AZURE_SETTING_DEFAULTS as Readonly<Record<string, string>>)[name];
        return [
          name,
          literalValue(expression) ?? (integer ? String(integer.defaultValue) : (codeDefault ?? placeholder)),
        ];
      }),
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

  it("schedule the timers as the code's defaults do, unless a deployment overrides them", () => {
    const bicep = read("infra/modules/function-app.bicep");
    const paramDefault = (param: string) => new RegExp(`param ${param} string = '([^']+)'`).exec(bicep)?.[1];
    expect(appSettings.get("STARTER_SCHEDULE")).toBe("starterSchedule");
    expect(paramDefault("starterSchedule")).toBe(AZURE_SETTING_DEFAULTS.STARTER_SCHEDULE);
    expect(appSettings.get("SUPERVISOR_SCHEDULE")).toBe("supervisorSchedule");
    expect(paramDefault("supervisorSchedule")).toBe(AZURE_SETTING_DEFAULTS.SUPERVISOR_SCHEDULE);
  });

  it("pass the Durable Functions task hub a name it accepts", () => {
    expect(literalValue(appSettings.get("TASKHUB_NAME") ?? "")).toMatch(/^[A-Za-z][A-Za-z0-9]{2,44}$/);
  });

  it("keep AGENT_REQUEST_MAX_DELIVERIES equal to the agent-requests queue's maximum delivery count", () => {
    expect(appSettings.get("AGENT_REQUEST_MAX_DELIVERIES")).toBe("string(agentRequestMaxDeliveries)");
    expect(functionAppParams.get("agentRequestMaxDeliveries")).toBe("queues.agentRequests.maxDeliveryCount");
  });

  it("name the lease container the storage module creates", () => {
    expect(appSettings.get("SUPERVISOR_LEASE_CONTAINER")).toBe("leaseContainerName");
    expect(functionAppParams.get("leaseContainerName")).toBe("leaseContainerName");
    expect(moduleParams("storage").get("containerNames")).toMatch(/\bleaseContainerName\b/);
  });

  it("are the site's settings", () => {
    expect(
      entryAt(
        declaration(functionAppBicep, "resource", "app").value,
        "properties",
        "siteConfig",
        "appSettings",
      ),
    ).toBe("appSettings");
  });

  it("leave FUNCTIONS_WORKER_RUNTIME to the Flex Consumption runtime declaration", () => {
    expect(appSettings.has("FUNCTIONS_WORKER_RUNTIME")).toBe(false);
    expect(functionAppBicep).toMatch(/runtime:\s*\{\s*name:\s*'node',\s*version:\s*nodeVersion\s*\}/);
    expect(declaration(main, "param", "nodeVersion").value).toMatch(/^'(20|22)'$/);
  });
});

describe("the checks catch a doctored deployment", () => {
  it("a connection string with a shared access key", () => {
    const doctored = new Map(appSettings);
    doctored.set("ServiceBusConnection", "'Endpoint=sb://x.servicebus.windows.net/;SharedAccessKey=abc'");
    expect(secretProblems(doctored)).toEqual([
      "ServiceBusConnection: holds a connection string or key when set",
      "ServiceBusConnection: its value looks like a secret: 'Endpoint=sb://x.servicebus.windows.net/;SharedAccessKey=abc'",
    ]);
  });

  it("a key fetched with listKeys(), and a Cosmos DB key", () => {
    const doctored = new Map(appSettings);
    doctored.set("CosmosDb__key", "cosmos.listKeys().primaryMasterKey");
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
    doctored.set("PARTNER_URI", "partnerUrl");
    doctored.set("FUNCTIONS_WORKER_RUNTIME", "'node'");
    expect(coverageProblems(doctored)).toEqual([
      "PARTNER_URI: set by the Bicep, but nothing reads it",
      "FUNCTIONS_WORKER_RUNTIME: not an app setting on Flex Consumption",
    ]);
  });

  it("a role assignment dropped, and a role id mistyped", () => {
    const doctored = accessBicep
      .replace("roles.storageTableDataContributor]", "]")
      .replace(BUILT_IN_ROLES.serviceBusDataSender, "69a216fc-b8fb-44d8-bc22-1f3c2cd27a38");
    expect(missingRoles(roleAssignments(doctored), "appPrincipalId", APP_NEEDS)).toEqual([
      `appPrincipalId lacks role ${BUILT_IN_ROLES.storageTableDataContributor} on Microsoft.Storage/storageAccounts (task hub history and instances tables)`,
      `appPrincipalId lacks role ${BUILT_IN_ROLES.serviceBusDataSender} on Microsoft.ServiceBus/namespaces (agent requests and replies, status messages, parked messages, POST /api/orders)`,
    ]);
  });
});

describe("identity and roles", () => {
  const assignments = roleAssignments(accessBicep);

  it("give the app's identity a role on everything the code and the host talk to", () => {
    expect(missingRoles(assignments, "appPrincipalId", APP_NEEDS)).toEqual([]);
  });

  it("let the deploying principal send orders (sas send)", () => {
    const needs = [
      { scope: "Microsoft.ServiceBus/namespaces", role: BUILT_IN_ROLES.serviceBusDataSender, why: "" },
    ];
    expect(missingRoles(assignments, "deployerPrincipalId", needs)).toEqual([]);
  });

  it("assign them to the Function App's system-assigned identity", () => {
    expect(moduleParams("access").get("appPrincipalId")).toBe("functionApp.outputs.principalId");
    expect(declaration(functionAppBicep, "output", "principalId").value).toBe("app.identity.principalId");
    expect(entryAt(declaration(functionAppBicep, "resource", "app").value, "identity", "type")).toBe(
      "'SystemAssigned'",
    );
  });

  it("grant Azure SQL access in the database, after provisioning, with the roles the migrations need", () => {
    const hook = /postprovision:[\s\S]*?run:\s*(\S+)/.exec(read("azure.yaml"))?.[1] ?? "";
    expect(hook).toBe("./infra/scripts/grant-sql-access.sh");
    const script = read(hook);
    expect(script).toMatch(/--authentication-method ActiveDirectoryDefault/);
    const sql = infra("scripts/app-database-user.sql");
    expect(sql).toMatch(/CREATE USER \[\$\(APP_NAME\)\] FROM EXTERNAL PROVIDER/);
    for (const role of ["db_datareader", "db_datawriter", "db_ddladmin"]) {
      expect(sql).toContain(`ALTER ROLE ${role} ADD MEMBER [$(APP_NAME)];`);
    }
    const outputs = new Set(
      declarations(main)
        .filter((d) => d.keyword === "output")
        .map((d) => d.name),
    );
    const used = [...script.matchAll(/\$\{(AZURE_\w+)[:}]/g)].map((m) => m[1] ?? "");
    expect(used.filter((name) => !outputs.has(name))).toEqual([]);
  });

  it("leave no local authentication on: keys, SAS, shared keys, SQL logins", () => {
    const hardening: [string, RegExp][] = [
      ["modules/storage.bicep", /allowSharedKeyAccess:\s*false/],
      ["modules/storage.bicep", /allowBlobPublicAccess:\s*false/],
      ["modules/storage.bicep", /minimumTlsVersion:\s*'TLS1_2'/],
      ["modules/service-bus.bicep", /disableLocalAuth:\s*true/],
      ["modules/service-bus.bicep", /minimumTlsVersion:\s*'1\.2'/],
      ["modules/cosmos.bicep", /disableLocalAuth:\s*true/],
      ["modules/cosmos.bicep", /minimalTlsVersion:\s*'Tls12'/],
      ["modules/cosmos.bicep", /backupPolicy:\s*\{\s*type:\s*'Continuous'/],
      ["modules/sql.bicep", /azureADOnlyAuthentication:\s*true/],
      ["modules/sql.bicep", /minimalTlsVersion:\s*'1\.2'/],
      ["modules/monitoring.bicep", /DisableLocalAuth:\s*true/],
      ["modules/function-app.bicep", /httpsOnly:\s*true/],
    ];
    expect(
      hardening.filter(([file, pattern]) => !pattern.test(infra(file))).map(([file, p]) => `${file}: ${p}`),
    ).toEqual([]);
    expect(main + infra("modules/sql.bicep")).not.toMatch(/administratorLoginPassword/);
  });
});

describe("queues", () => {
  const definitions = Object.entries(queues);

  it("declare every queue the code uses, under the same keys as QUEUE_NAMES", () => {
    expect(Object.fromEntries(definitions.map(([key, queue]) => [key, queue.name]))).toEqual(QUEUE_NAMES);
  });

  it("remember message ids for at least the retry horizon of the default settings", () => {
    const horizon = retryHorizonMs();
    expect(Object.values(horizon.parts).every((ms) => ms > 0)).toBe(true);
    for (const [, queue] of definitions) {
      expect(queue.requiresDuplicateDetection, queue.name).toBe(true);
      const window = isoDurationMs(queue.duplicateDetectionHistoryTimeWindow);
      expect(window, queue.name).toBeGreaterThanOrEqual(horizon.totalMs);
      expect(window, `${queue.name}: Service Bus allows at most 7 days`).toBeLessThanOrEqual(7 * 86_400_000);
    }
  });

  it("dead-letter expired messages, and lock within what Service Bus Standard allows", () => {
    for (const [, queue] of definitions) {
      expect(queue.deadLetteringOnMessageExpiration, queue.name).toBe(true);
      const lock = isoDurationMs(queue.lockDuration);
      expect(lock, queue.name).toBeGreaterThanOrEqual(5_000);
      expect(lock, queue.name).toBeLessThanOrEqual(5 * 60_000);
      expect(queue.maxDeliveryCount, queue.name).toBeGreaterThanOrEqual(1);
    }
  });

  it("deliver an Agent request at most as often as the retry budget counts", () => {
    expect(queues.agentRequests?.maxDeliveryCount).toBe(
      INTEGER_SETTINGS.agentRequestMaxDeliveries.defaultValue,
    );
  });

  it("are created with every property of queues.json", () => {
    const serviceBusBicep = infra("modules/service-bus.bicep");
    for (const property of Object.keys(queues.orders ?? {}).filter((key) => key !== "name")) {
      expect(serviceBusBicep).toContain(`${property}: entry.value.${property}`);
    }
    expect(declaration(main, "var", "queues").value).toBe("loadJsonContent('queues.json')");
    expect(moduleParams("serviceBus").get("queues")).toBe("queues");
  });
});

describe("state container", () => {
  it("matches ORDER_STATE_CONTAINER: database, id, partition key and indexing policy", () => {
    const { defaultDatabaseName, ...container } = ORDER_STATE_CONTAINER;
    expect(stateContainer).toEqual({ database: defaultDatabaseName, ...container });
  });

  it("is what the Cosmos DB module creates", () => {
    const cosmosBicep = infra("modules/cosmos.bicep");
    for (const property of ["id", "partitionKey", "indexingPolicy"]) {
      expect(cosmosBicep).toMatch(new RegExp(`\\b${property}: container\\.${property}\\b`));
    }
    expect(cosmosBicep).toMatch(/name: container\.database\b/);
    expect(declaration(main, "var", "stateContainer").value).toBe("loadJsonContent('state-container.json')");
    expect(moduleParams("cosmos").get("container")).toBe("stateContainer");
    expect(functionAppParams.get("cosmosDatabaseName")).toBe("cosmos.outputs.databaseName");
  });
});

describe("alerts", () => {
  it("watch every queue's dead-letter count", () => {
    expect(alertsBicep).toMatch(/metricName:\s*'DeadletteredMessages'/);
    expect(alertsBicep).toMatch(
      /dimensions:\s*\[\{ name: 'EntityName', operator: 'Include', values: \['\*'\] \}\]/,
    );
  });

  it("watch the invalid-messages queue for parked messages", () => {
    expect(alertsBicep).toMatch(/metricName:\s*'ActiveMessages'[\s\S]*values: \[invalidMessagesQueueName\]/);
    expect(moduleParams("alerts").get("invalidMessagesQueueName")).toBe("queues.invalidMessages.name");
  });

  it("query the log line the alert sink writes, for every alert kind not seen on a queue", () => {
    const sink = read("src/adapters/logging/logging-alert-sink.ts");
    const event = /logger\.error\("([^"]+)"/.exec(sink)?.[1] ?? "";
    expect(event).toBe("operator.alert");
    expect(alertsBicep).toContain(`tostring(line.event) == "${event}"`);
    // Refused orders are parked on invalid-messages (src/adapters/functions-host/settle.ts): alerted above.
    const parked = ["InvalidMessage", "ConflictingOrder"];
    const queried = new Set(
      declarations(alertsBicep)
        .filter((d) => d.keyword === "var" && d.name === "logAlerts")
        .flatMap((d) => [...d.value.matchAll(/"(\w+)"/g)].map((m) => m[1] ?? "")),
    );
    expect(ALERT_KINDS.filter((kind) => !parked.includes(kind) && !queried.has(kind))).toEqual([]);
  });
});

describe("templates", () => {
  const files = ["main.bicep", ...readdirSync(join(root, "infra/modules")).map((file) => `modules/${file}`)];

  /** Every object literal, nested ones and those in arrays included, reads as `key: value` entries. */
  function objectsRead(expression: string): void {
    if (/^(if \(|\[\s*for |\{)/.test(expression)) {
      for (const value of objectEntries(firstObject(expression)).values()) objectsRead(value);
    } else if (expression.startsWith("[")) {
      for (const element of arrayElements(expression)) objectsRead(element);
    }
  }

  it.each(files)("%s reads as declarations with balanced brackets and object literals", (file) => {
    const source = infra(file);
    expect(strayStatements(source)).toEqual([]);
    for (const d of declarations(source)) objectsRead(d.value);
  });

  it("call each module with parameters it declares, every required one included, and outputs it has", () => {
    const problems: string[] = [];
    for (const call of declarations(main).filter((d) => d.keyword === "module")) {
      const module = declarations(infra(call.target));
      const declared = module.filter((d) => d.keyword === "param");
      const given = [...objectEntries(entryAt(call.value, "params")).keys()];
      for (const name of given) {
        if (!declared.some((p) => p.name === name)) problems.push(`${call.name}: no param ${name}`);
      }
      for (const p of declared) {
        if (p.value === "" && !given.includes(p.name)) problems.push(`${call.name}: ${p.name} not given`);
      }
      for (const match of main.matchAll(new RegExp(`\\b${call.name}\\.outputs\\.(\\w+)`, "g"))) {
        const output = match[1] ?? "";
        if (!module.some((d) => d.keyword === "output" && d.name === output)) {
          problems.push(`${call.name}: no output ${output}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("azd wiring", () => {
  it("deploys the one Functions service azure.yaml names to the app tagged with its name", () => {
    const yaml = read("azure.yaml");
    const service =
      /^services:\n {2}(?:#.*\n {2})?(\w+):\n {4}project: \.\n {4}language: ts\n {4}host: function$/m.exec(
        yaml,
      );
    expect(service?.[1]).toBe(mainVar("serviceName"));
    expect(functionAppParams.get("serviceName")).toBe("serviceName");
    expect(functionAppBicep).toMatch(/tags: union\(tags, \{ 'azd-service-name': serviceName \}\)/);
    expect(functionAppBicep).toMatch(/sku: \{ name: 'FC1', tier: 'FlexConsumption' \}/);
  });

  it("refers to module and JSON files that exist", () => {
    const missing = declarations(main)
      .filter((d) => d.keyword === "module")
      .map((d) => d.target)
      .concat([...main.matchAll(/loadJsonContent\('([^']+)'\)/g)].map((m) => m[1] ?? ""))
      .filter((path) => !existsSync(join(root, "infra", path)));
    expect(missing).toEqual([]);
  });

  it("passes main.parameters.json to parameters main.bicep declares, and every required one", () => {
    const file = JSON.parse(infra("main.parameters.json")) as { parameters: Record<string, unknown> };
    const params = declarations(main).filter((d) => d.keyword === "param");
    const given = Object.keys(file.parameters);
    expect(given.filter((name) => !params.some((p) => p.name === name))).toEqual([]);
    expect(params.filter((p) => p.value === "" && !given.includes(p.name)).map((p) => p.name)).toEqual([]);
  });

  it("outputs the Service Bus namespace under the setting name `sas send` reads", () => {
    expect(declaration(main, "output", `${CONNECTION_NAMES.serviceBus}__fullyQualifiedNamespace`).value).toBe(
      "serviceBus.outputs.fullyQualifiedNamespace",
    );
  });

  it("measures schedules and durations as the checks above assume", () => {
    expect(schedulePeriodMs("*/10 * * * * *")).toBe(10_000);
    expect(schedulePeriodMs("0 */1 * * * *")).toBe(60_000);
    expect(() => schedulePeriodMs("0 30 9 * * 1-5")).toThrow();
    expect(isoDurationMs("P1D")).toBe(86_400_000);
    expect(isoDurationMs("PT1M30S")).toBe(90_000);
    expect(() => isoDurationMs("1 day")).toThrow();
  });
});
