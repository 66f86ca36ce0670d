/**
 * Checks of the deployment in infra/ against the code: what the Function App's
 * settings are, which roles its identity holds where, how long the broker remembers message ids. Each
 * check returns the problems it finds, so that a test can also show it failing on a doctored input.
 */
import { AZURE_SETTING_DEFAULTS, AZURE_SETTING_NAMES } from "../../src/config/azure-settings.js";
import { BREAKER_SETTING_NAMES } from "../../src/config/breaker-settings.js";
import {
  CONNECTION_NAMES,
  HOST_SETTING_NAMES,
  QUEUE_NAMES,
  TIMER_SCHEDULE_SETTINGS,
} from "../../src/config/names.js";
import {
  AGENT_MODE_SETTING,
  INTEGER_SETTINGS,
  ON_RECOVERIES_EXHAUSTED_SETTING,
  WORKFLOW_VERSION_SETTING,
} from "../../src/config/settings.js";
import { backoffCeilingMs } from "../../src/domain/backoff.js";
import { LATEST_WORKFLOW_VERSION } from "../../src/domain/workflow.js";
import { Unresolved } from "./arm-expressions.js";
import { type DeployedResource, moduleOutput } from "./compiled-template.js";

/** App setting name to its value in the compiled template (an expression's text where only Azure knows it). */
export type AppSettings = ReadonlyMap<string, string>;

const { serviceBus, cosmos, sql, storage } = CONNECTION_NAMES;

/** Every setting src/config reads, under the Functions host. */
export const SETTINGS_READ: readonly string[] = [
  ...AZURE_SETTING_NAMES,
  ...HOST_SETTING_NAMES,
  ...Object.values(INTEGER_SETTINGS).map((setting) => setting.name),
  AGENT_MODE_SETTING,
  ON_RECOVERIES_EXHAUSTED_SETTING,
  WORKFLOW_VERSION_SETTING,
];

/**
 * Defaults written inline in src/config rather than exported; the test that loads the settings the Bicep
 * sets proves the code accepts their absence.
 */
export const INLINE_DEFAULTS: Readonly<Record<string, string>> = {
  [AGENT_MODE_SETTING]: "activity",
  [ON_RECOVERIES_EXHAUSTED_SETTING]: "error",
  [WORKFLOW_VERSION_SETTING]: String(LATEST_WORKFLOW_VERSION),
  [`${cosmos}__allowSelfSignedCertificate`]: "false",
};

/** Provided by the platform, not by app settings. */
export const PLATFORM_SETTINGS: Readonly<Record<string, string>> = {
  FUNCTIONS_WORKER_RUNTIME: "Flex Consumption takes the worker from functionAppConfig.runtime",
};

/**
 * Settings that hold a connection string or a key when set, and the identity-based settings that must
 * replace each of them in Azure.
 */
export const IDENTITY_FORMS: Readonly<Record<string, readonly string[]>> = {
  [serviceBus]: [`${serviceBus}__fullyQualifiedNamespace`],
  [`${cosmos}__key`]: [`${cosmos}__endpoint`],
  [sql]: [`${sql}__server`, `${sql}__database`],
  // The code reads the blob endpoint; the host and Durable Functions' Azure Storage backend need all three.
  [storage]: [`${storage}__blobServiceUri`, `${storage}__queueServiceUri`, `${storage}__tableServiceUri`],
};

/** The Durable Task Scheduler's connection, which host.json's storage provider names (DURABLE_BACKEND=dts). */
export const SCHEDULER_CONNECTION_SETTING = "DURABLE_TASK_SCHEDULER_CONNECTION_STRING";

/** An app setting that stands for a path of host.json (`AzureFunctionsJobHost__extensions__durableTask__...`). */
export const HOST_JSON_OVERRIDE = /^AzureFunctionsJobHost__/;

/**
 * Settings read by the Functions host, the telemetry set-up (src/functions/telemetry-setup.ts) or the app's
 * credential (src/adapters/azure-credential.ts) rather than by src/config: the host's connections name the app's
 * user-assigned identity themselves (`__credential`, `__clientId`).
 */
export const HOST_ONLY_SETTINGS: readonly string[] = [
  `${storage}__queueServiceUri`,
  `${storage}__tableServiceUri`,
  `${storage}__credential`,
  `${storage}__clientId`,
  `${serviceBus}__credential`,
  `${serviceBus}__clientId`,
  "AZURE_CLIENT_ID",
  "APPLICATIONINSIGHTS_CONNECTION_STRING",
  "APPLICATIONINSIGHTS_AUTHENTICATION_STRING",
  SCHEDULER_CONNECTION_SETTING,
];

/**
 * F25-2: settings that override a path of host.json. The scale controller of Flex Consumption builds its view of
 * the durable backend from the package's host.json, not from these (Azure/azure-functions-durable-extension#2622),
 * so the package's host.json names the storage provider and no setting may say otherwise.
 */
export function hostJsonOverrides(settings: AppSettings): string[] {
  return [...settings.keys()]
    .filter((name) => HOST_JSON_OVERRIDE.test(name))
    .map((name) => `${name}: overrides host.json, which the scale controller reads instead`);
}

/** Settings Flex Consumption rejects or ignores (its runtime and deployment are in functionAppConfig). */
export const FLEX_UNSUPPORTED_SETTINGS: readonly string[] = [
  "FUNCTIONS_WORKER_RUNTIME",
  "FUNCTIONS_EXTENSION_VERSION",
  "WEBSITE_RUN_FROM_PACKAGE",
  "WEBSITE_NODE_DEFAULT_VERSION",
  "WEBSITE_CONTENTSHARE",
  "WEBSITE_CONTENTAZUREFILECONNECTIONSTRING",
  "SCM_DO_BUILD_DURING_DEPLOYMENT",
];

const SECRET_VALUE =
  /AccountKey=|SharedAccessKey|SharedAccessSignature|Password=|\blist\w*\(|connectionString/i;
const SECRET_NAME = /(key|password|secret|sas|token)$/i;

/** Values that match SECRET_VALUE and still hold no secret, with the reason. */
export const NOT_SECRET: Readonly<Record<string, string>> = {
  APPLICATIONINSIGHTS_CONNECTION_STRING:
    "an instrumentation key and endpoints identify the resource; with local auth off, ingestion needs the " +
    "Entra token that APPLICATIONINSIGHTS_AUTHENTICATION_STRING asks for",
};

/**
 * A Key Vault reference (`@Microsoft.KeyVault(VaultName=...;SecretName=...)`): the setting names a secret that
 * the platform reads with the app's identity, so the secret itself is in neither the template nor the settings.
 */
const KEY_VAULT_REFERENCE = /^<?@Microsoft\.KeyVault\(VaultName=[^;]+;SecretName=[\w-]+\)>?$/;

/**
 * Connection strings, keys, passwords and ARM list*() calls (which return keys) have no place here; a setting
 * whose name says it holds a secret must take it from the Key Vault.
 */
export function secretProblems(settings: AppSettings): string[] {
  const problems: string[] = [];
  for (const [name, value] of settings) {
    if (name in IDENTITY_FORMS) problems.push(`${name}: holds a connection string or key when set`);
    else if (SECRET_NAME.test(name) && !KEY_VAULT_REFERENCE.test(value))
      problems.push(`${name}: its name says it holds a secret`);
    if (SECRET_VALUE.test(value) && !(name in NOT_SECRET)) {
      problems.push(`${name}: its value looks like a secret: ${value}`);
    }
  }
  return problems;
}

/** Whether the code or the platform supplies a value when no app setting does. */
export function hasDefault(name: string): boolean {
  return (
    name in AZURE_SETTING_DEFAULTS ||
    name in INLINE_DEFAULTS ||
    name in PLATFORM_SETTINGS ||
    Object.values(INTEGER_SETTINGS).some((setting) => setting.name === name) ||
    BREAKER_SETTING_NAMES.includes(name)
  );
}

/**
 * Settings the Functions host resolves itself (`%NAME%` in a binding or in host.json): a default in our
 * code does not reach the host, so the app setting must exist.
 */
export const HOST_RESOLVED_SETTINGS: readonly string[] = [
  ...Object.values(TIMER_SCHEDULE_SETTINGS),
  "TASKHUB_NAME",
];

/**
 * Settings of the laptop's hosts, which the app itself does not read (`sas host` hands the app its SQLite orders
 * table, laptop/functions-host/sql-choice.ts): the Bicep must never set them.
 */
export const LOCAL_ONLY_SETTINGS: readonly string[] = [`${sql}__sqliteFile`];

/** Every setting the code reads is set, defaulted in code, or provided by the platform. */
export function coverageProblems(settings: AppSettings): string[] {
  const problems: string[] = [];
  for (const name of HOST_RESOLVED_SETTINGS) {
    if (!settings.has(name)) problems.push(`${name}: resolved by the Functions host, so it must be set`);
  }
  for (const name of new Set(SETTINGS_READ)) {
    const forms = IDENTITY_FORMS[name];
    if (forms) {
      const unset = forms.filter((form) => !settings.has(form));
      if (unset.length > 0) problems.push(`${name}: its identity-based form needs ${unset.join(", ")}`);
    } else if (!settings.has(name) && !hasDefault(name)) {
      problems.push(`${name}: read by src/config, but neither set by the Bicep nor defaulted in code`);
    }
  }
  const known = new Set([...SETTINGS_READ, ...Object.values(IDENTITY_FORMS).flat(), ...HOST_ONLY_SETTINGS]);
  for (const name of settings.keys()) {
    if (LOCAL_ONLY_SETTINGS.includes(name))
      problems.push(`${name}: a setting of the laptop's host, not the app's`);
    else if (!known.has(name)) problems.push(`${name}: set by the Bicep, but nothing reads it`);
    if (FLEX_UNSUPPORTED_SETTINGS.includes(name))
      problems.push(`${name}: not an app setting on Flex Consumption`);
  }
  return problems;
}

/** Reference ids of Azure's built-in roles (learn.microsoft.com/azure/role-based-access-control/built-in-roles). */
export const BUILT_IN_ROLES = {
  storageBlobDataOwner: "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
  storageBlobDataContributor: "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
  storageQueueDataContributor: "974c5e8b-45b9-4653-ba55-5f855dd0fb88",
  storageTableDataContributor: "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3",
  serviceBusDataSender: "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39",
  serviceBusDataReceiver: "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0",
  serviceBusDataOwner: "090c5cfd-751d-490a-894a-3ce6f1109419",
  monitoringMetricsPublisher: "3913510d-42f4-4e42-8a64-420c390055eb",
  keyVaultSecretsUser: "4633458b-17de-408a-b874-0445c86b69e6",
  keyVaultSecretsOfficer: "b86a8fe4-44ce-4948-aee5-eccb2c155cd7",
  /** Cosmos DB data plane (a sqlRoleDefinition of the account, not an Azure role). */
  cosmosDataContributor: "00000000-0000-0000-0000-000000000002",
} as const;

export interface RoleAssignment {
  /**
   * Resource type of the scope, e.g. Microsoft.Storage/storageAccounts; `<undefined>` when the assignment
   * names none, so it applies to the scope of the deployment that holds it (a resource group, or the
   * subscription).
   */
  readonly scope: string;
  /** The scope's own name where the template fixes it, e.g. a queue's; undefined where only Azure knows it. */
  readonly scopeName: string | undefined;
  readonly role: string;
  /**
   * Who holds it: `app` (the Function App's identity), `storefront` (the storefront's), `partner` (the
   * simulated partner's), `deployer`, or the principal id as found.
   */
  readonly principal: string;
  readonly principalType: string | undefined;
}

/** The Function App's user-assigned identity (its only one). */
const APP_PRINCIPAL = "app-identity.outputs.principalId";
const STOREFRONT_PRINCIPAL = "storefront.outputs.principalId";
/** The partner's system-assigned identity (its books) and its user-assigned one (its Key Vault reference). */
const PARTNER_PRINCIPALS = ["partner.outputs.principalId", "partner-identity.outputs.principalId"];

function principalOf(value: unknown, deployerId: string): string {
  if (moduleOutput(value) === APP_PRINCIPAL) return "app";
  if (moduleOutput(value) === STOREFRONT_PRINCIPAL) return "storefront";
  if (PARTNER_PRINCIPALS.includes(moduleOutput(value) ?? "")) return "partner";
  if (value === deployerId) return "deployer";
  return String(value);
}

/** The resource type a `resourceId(type, name...)` identifies. */
function scopeType(value: unknown): string {
  return /^resourceId\(([^,]+),/.exec(String(value))?.[1] ?? `<${String(value)}>`;
}

/** The last name of a `resourceId(type, names...)`, when it is known before the deployment. */
function scopeName(value: unknown): string | undefined {
  const last = /, ([^,<>]+)\)$/.exec(String(value))?.[1];
  return last?.trim();
}

/**
 * The role assignments of the compiled deployment, Azure RBAC and Cosmos DB data plane, each with the
 * role id it grants, the type of resource it is scoped to, and to whom. One whose condition is false for these
 * parameters is left out: it is not made.
 */
export function roleAssignments(
  resources: readonly DeployedResource[],
  deployerId: string,
): RoleAssignment[] {
  const result: RoleAssignment[] = [];
  for (const resource of resources) {
    if (resource.body.condition === false) continue;
    const properties = (resource.body.properties ?? {}) as Record<string, unknown>;
    if (resource.type === "Microsoft.Authorization/roleAssignments") {
      const role = /^subscriptionResourceId\(Microsoft\.Authorization\/roleDefinitions, ([\w-]+)\)$/.exec(
        String(properties.roleDefinitionId),
      )?.[1];
      result.push({
        scope: scopeType(resource.body.scope),
        scopeName: scopeName(resource.body.scope),
        role: role ?? `<${String(properties.roleDefinitionId)}>`,
        principal: principalOf(properties.principalId, deployerId),
        principalType: properties.principalType as string | undefined,
      });
    } else if (resource.type === "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments") {
      const definition = properties.roleDefinitionId;
      const text = definition instanceof Unresolved ? definition.text : String(definition);
      result.push({
        scope: scopeType(properties.scope),
        scopeName: scopeName(properties.scope),
        role: /\/sqlRoleDefinitions\/([\w-]+)$/.exec(text)?.[1] ?? `<${text}>`,
        principal: principalOf(properties.principalId, deployerId),
        principalType: undefined,
      });
    }
  }
  return result;
}

export interface RoleNeed {
  readonly scope: string;
  /** A named resource of that type (a queue), or any resource of it when absent. */
  readonly scopeName?: string;
  readonly role: string;
  readonly why: string;
}

/**
 * The queues a Service Bus trigger of the app reads (src/functions: submitOrder, agentWorker, agentReplies):
 * target-based scaling reads their length with the app's identity, which takes the Manage right.
 */
export const TRIGGERED_QUEUES = [QUEUE_NAMES.orders, QUEUE_NAMES.agentRequests, QUEUE_NAMES.agentResponses];

/**
 * The queues the app reads without a trigger: the statistics (GET /api/stats) peek the parked messages. The
 * dead-letter queues they also peek are those of the triggered queues (Data Owner) and of this one.
 */
export const PEEKED_QUEUES = [QUEUE_NAMES.invalidMessages];

/** A Key Vault secret as a role's scope. */
export const KEY_VAULT_SECRET = "Microsoft.KeyVault/vaults/secrets";

/** What the app's identity needs, on what: everything the code and the host talk to. */
export const APP_NEEDS: readonly RoleNeed[] = [
  {
    scope: "Microsoft.Storage/storageAccounts",
    role: BUILT_IN_ROLES.storageBlobDataOwner,
    why: "host, task hub blobs, Supervisor lease, deployment package",
  },
  {
    scope: "Microsoft.Storage/storageAccounts",
    role: BUILT_IN_ROLES.storageQueueDataContributor,
    why: "task hub control and work-item queues",
  },
  {
    scope: "Microsoft.Storage/storageAccounts",
    role: BUILT_IN_ROLES.storageTableDataContributor,
    why: "task hub history and instances tables",
  },
  // Receiving is granted queue by queue, never on the namespace: the storefront's status queue is its own.
  ...PEEKED_QUEUES.map((queue) => ({
    scope: "Microsoft.ServiceBus/namespaces/queues",
    scopeName: queue,
    role: BUILT_IN_ROLES.serviceBusDataReceiver,
    why: "the statistics peek the parked messages",
  })),
  {
    scope: "Microsoft.ServiceBus/namespaces",
    role: BUILT_IN_ROLES.serviceBusDataSender,
    why: "agent requests and replies, status messages, parked messages, POST /api/orders",
  },
  ...TRIGGERED_QUEUES.map((queue) => ({
    scope: "Microsoft.ServiceBus/namespaces/queues",
    scopeName: queue,
    role: BUILT_IN_ROLES.serviceBusDataOwner,
    why: "the scale controller reads the triggered queue's length (Manage right)",
  })),
  {
    scope: "Microsoft.DocumentDB/databaseAccounts",
    role: BUILT_IN_ROLES.cosmosDataContributor,
    why: "the state store",
  },
  {
    scope: "Microsoft.Insights/components",
    role: BUILT_IN_ROLES.monitoringMetricsPublisher,
    why: "telemetry with local auth off",
  },
  // Each secret on its own: the app reads these two and nothing else in the vault.
  {
    scope: KEY_VAULT_SECRET,
    scopeName: "data-protection-keys",
    role: BUILT_IN_ROLES.keyVaultSecretsUser,
    why: "DATA_PROTECTION_KEYS, a Key Vault reference",
  },
  {
    scope: KEY_VAULT_SECRET,
    scopeName: "partner-access-key",
    role: BUILT_IN_ROLES.keyVaultSecretsUser,
    why: "PARTNER_ACCESS_KEY, a Key Vault reference",
  },
];

const covers = (a: RoleAssignment, need: RoleNeed) =>
  a.scope === need.scope &&
  a.role === need.role &&
  (need.scopeName === undefined || a.scopeName === need.scopeName);

export function missingRoles(
  assignments: readonly RoleAssignment[],
  principal: string,
  needs: readonly RoleNeed[],
): string[] {
  return needs
    .filter((need) => !assignments.some((a) => a.principal === principal && covers(a, need)))
    .map(
      (need) =>
        `${principal} lacks role ${need.role} on ${need.scope}${need.scopeName ? ` ${need.scopeName}` : ""} (${need.why})`,
    );
}

/** Assignments no need asks for: a role granted beyond what the code uses. */
export function excessRoles(
  assignments: readonly RoleAssignment[],
  needs: Readonly<Record<string, readonly RoleNeed[]>>,
): string[] {
  return assignments
    .filter((a) => !(needs[a.principal] ?? []).some((need) => covers(a, need)))
    .map((a) => `${a.principal} holds role ${a.role} on ${a.scope}${a.scopeName ? ` ${a.scopeName}` : ""}`);
}

export { isoDurationMs } from "../../src/domain/time.js";

/** The period of a regular six-field NCRONTAB schedule: `*\/n` seconds, or every n minutes or hours. */
export function schedulePeriodMs(expression: string): number {
  const fields = expression.trim().split(/\s+/);
  const every = (field: string | undefined): number | undefined => {
    const match = /^\*(?:\/(\d+))?$/.exec(field ?? "");
    return match ? Number(match[1] ?? 1) : undefined;
  };
  const fixed = (field: string | undefined) => /^\d+$/.test(field ?? "");
  const rest = (from: number) => fields.slice(from).every((field) => field === "*");
  const [second, minute, hour] = fields;
  if (fields.length === 6) {
    const seconds = every(second);
    if (seconds !== undefined && rest(1)) return seconds * 1_000;
    const minutes = every(minute);
    if (fixed(second) && minutes !== undefined && rest(2)) return minutes * 60_000;
    const hours = every(hour);
    if (fixed(second) && fixed(minute) && hours !== undefined && rest(3)) return hours * 3_600_000;
  }
  throw new Error(`not a regular schedule this check can measure: ${expression}`);
}

/**
 * The longest an order can keep the pipeline retrying, with the default settings: every attempt runs to
 * its deadline, every recovery waits its longest backoff, and each expiry and each claim waits a whole
 * Supervisor and starter period to be noticed (the code's default schedules, or those given).
 */
export function retryHorizonMs(
  schedules: { readonly starter: string; readonly supervisor: string } = {
    starter: AZURE_SETTING_DEFAULTS.STARTER_SCHEDULE,
    supervisor: AZURE_SETTING_DEFAULTS.SUPERVISOR_SCHEDULE,
  },
): {
  readonly totalMs: number;
  readonly parts: Readonly<Record<string, number>>;
} {
  const value = (key: keyof typeof INTEGER_SETTINGS) => INTEGER_SETTINGS[key].defaultValue;
  const recoveries = value("maxRecoveries");
  const attempts = recoveries + 1;
  let backoffs = 0;
  for (let failure = 1; failure <= recoveries; failure++) {
    backoffs +=
      failure > value("extendedBackoffAfter")
        ? value("extendedBackoffMs")
        : backoffCeilingMs(
            { baseMs: value("recoveryBackoffBaseMs"), capMs: value("recoveryBackoffCapMs") },
            failure,
          );
  }
  const parts = {
    attempts: attempts * value("attemptTimeoutMs"),
    backoffs,
    supervisorDetection: recoveries * schedulePeriodMs(schedules.supervisor),
    starterPickup: attempts * schedulePeriodMs(schedules.starter),
  };
  return { totalMs: Object.values(parts).reduce((a, b) => a + b, 0), parts };
}
