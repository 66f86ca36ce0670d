import type { KeyRing } from "../domain/key-ring.js";
import { DATA_PROTECTION_KEYS_SETTING, parseKeyRing } from "./data-protection.js";
import {
  CONNECTION_NAMES,
  LEASE_CONTAINER_SETTING,
  PARTNER_ACCESS_KEY_SETTING,
  PARTNER_URL_SETTING,
  TIMER_SCHEDULE_SETTINGS,
} from "./names.js";
import { ncrontabProblem } from "./ncrontab.js";
import { type Environment, loadPipelineSettings, type PipelineSettings, SettingsError } from "./settings.js";

/** A connection string (emulators, local servers), or an identity-based connection (Azure). */
export type ServiceBusConnection =
  | { readonly kind: "connectionString"; readonly connectionString: string }
  | { readonly kind: "identity"; readonly fullyQualifiedNamespace: string };

export type CosmosConnection =
  | {
      readonly kind: "key";
      readonly endpoint: string;
      readonly key: string;
      /** Only for the local emulator, whose certificate is self-signed. */
      readonly allowSelfSignedCertificate: boolean;
    }
  | { readonly kind: "identity"; readonly endpoint: string };

export type SqlConnection =
  | { readonly kind: "connectionString"; readonly connectionString: string }
  | { readonly kind: "identity"; readonly server: string; readonly database: string }
  /**
   * Local only: the host that loaded the app handed it an orders table of its own (`sas host`, on a laptop
   * without SQL Server, hands it one in a SQLite file), under HOSTED_ORDERS.
   */
  | { readonly kind: "hosted" };

/**
 * Where a host that runs the app in its own process puts the orders repository it hands the app: a key in the
 * process-wide symbol registry, because the host and the built app it imports are separate module graphs (the
 * host's sources, the app's dist/) and share nothing else. Nothing sets it in Azure; the app itself imports no
 * SQLite driver, so its package carries none.
 */
export const HOSTED_ORDERS: unique symbol = Symbol.for("scheduler-agent-supervisor.hosted-orders");

/** What the host put under HOSTED_ORDERS, if anything. */
export function hostedOrders(): unknown {
  return (globalThis as { [HOSTED_ORDERS]?: unknown })[HOSTED_ORDERS];
}

/** The first characters of an App Service Key Vault reference, which the platform replaces by the secret. */
const KEY_VAULT_REFERENCE = "@Microsoft.KeyVault(";

export type StorageConnection =
  | { readonly kind: "connectionString"; readonly connectionString: string }
  | { readonly kind: "identity"; readonly blobServiceUri: string };

export interface AzureSettings {
  readonly pipeline: PipelineSettings;
  readonly serviceBus: ServiceBusConnection;
  readonly cosmos: CosmosConnection;
  readonly cosmosDatabase: string;
  readonly sql: SqlConnection;
  readonly storage: StorageConnection;
  readonly leaseContainer: string;
  readonly partnerUrl: string;
  readonly starterSchedule: string;
  readonly supervisorSchedule: string;
  readonly retentionSchedule: string;
  /** Seals the state store's personal and payment fields; in Azure a Key Vault reference resolves it. */
  readonly dataProtectionKeys: KeyRing;
}

/** Defaults of the settings that have one; docs/configuration.md lists the same. */
export const AZURE_SETTING_DEFAULTS: Readonly<Record<DefaultedSetting, string>> = {
  CosmosDb__database: "orders",
  SUPERVISOR_LEASE_CONTAINER: "leases",
  STARTER_SCHEDULE: "*/10 * * * * *",
  SUPERVISOR_SCHEDULE: "0 */1 * * * *",
  // Hourly: each run purges what expired in the last hour, a small batch.
  RETENTION_SCHEDULE: "0 5 * * * *",
};

type DefaultedSetting =
  | `${typeof CONNECTION_NAMES.cosmos}__database`
  | typeof LEASE_CONTAINER_SETTING
  | (typeof TIMER_SCHEDULE_SETTINGS)[keyof typeof TIMER_SCHEDULE_SETTINGS];

const sb = CONNECTION_NAMES.serviceBus;
const cosmos = CONNECTION_NAMES.cosmos;
const sql = CONNECTION_NAMES.sql;
const storage = CONNECTION_NAMES.storage;

/** Every setting the Azure app reads, for the consistency test with the sample and the Bicep. */
export const AZURE_SETTING_NAMES = [
  sb,
  `${sb}__fullyQualifiedNamespace`,
  `${cosmos}__endpoint`,
  `${cosmos}__key`,
  `${cosmos}__database`,
  `${cosmos}__allowSelfSignedCertificate`,
  sql,
  `${sql}__server`,
  `${sql}__database`,
  storage,
  `${storage}__blobServiceUri`,
  LEASE_CONTAINER_SETTING,
  PARTNER_URL_SETTING,
  PARTNER_ACCESS_KEY_SETTING,
  TIMER_SCHEDULE_SETTINGS.starter,
  TIMER_SCHEDULE_SETTINGS.supervisor,
  TIMER_SCHEDULE_SETTINGS.retention,
  DATA_PROTECTION_KEYS_SETTING,
] as const;

/**
 * Reads the Azure app's settings: the pipeline's, plus its connections. Each connection is chosen by
 * which settings are present: a connection string, or the identity-based form. Throws a SettingsError
 * naming every setting that is missing or malformed.
 */
export function loadAzureSettings(env: Environment): AzureSettings {
  const problems: string[] = [];
  const pipeline = readPipelineSettings(env, problems);
  const unresolved = unresolvedReferences(env, problems);
  const read = settingsReader(env, problems);
  const serviceBus = readServiceBusConnection(read);
  const cosmosConnection = readCosmosConnection(read);
  const sqlConnection = readSqlConnection(read);
  const storageConnection = readStorageConnection(read);
  const partnerUrl = read.url(PARTNER_URL_SETTING, ["https:", "http:"]);
  if (!partnerUrl && !read.value(PARTNER_URL_SETTING)) read.missing("partner service", PARTNER_URL_SETTING);
  const starterSchedule = readSchedule(read, TIMER_SCHEDULE_SETTINGS.starter);
  const supervisorSchedule = readSchedule(read, TIMER_SCHEDULE_SETTINGS.supervisor);
  const retentionSchedule = readSchedule(read, TIMER_SCHEDULE_SETTINGS.retention);
  const dataProtectionKeys = unresolved.includes(DATA_PROTECTION_KEYS_SETTING)
    ? undefined
    : readDataProtectionKeys(read);
  const leaseContainer = readLeaseContainer(read);

  if (
    problems.length > 0 ||
    !pipeline ||
    !serviceBus ||
    !cosmosConnection ||
    !sqlConnection ||
    !storageConnection ||
    !partnerUrl ||
    !dataProtectionKeys
  ) {
    throw new SettingsError(problems);
  }
  return {
    pipeline,
    serviceBus,
    cosmos: cosmosConnection,
    cosmosDatabase: read.withDefault(`${cosmos}__database`),
    sql: sqlConnection,
    storage: storageConnection,
    leaseContainer,
    partnerUrl,
    starterSchedule,
    supervisorSchedule,
    retentionSchedule,
    dataProtectionKeys,
  };
}

/**
 * The settings that still read `@Microsoft.KeyVault(...)`: App Service could not resolve the reference (the
 * app's identity may not read the secret yet, or the secret does not exist yet), so the setting holds the
 * reference's text instead of the secret. Each is named, with how to resolve it; the pipeline's own
 * settings (PARTNER_ACCESS_KEY) say so themselves.
 */
function unresolvedReferences(env: Environment, problems: string[]): string[] {
  const pipelineChecks: readonly string[] = [PARTNER_ACCESS_KEY_SETTING];
  const unresolved = AZURE_SETTING_NAMES.filter((name) => env[name]?.trim().startsWith(KEY_VAULT_REFERENCE));
  for (const name of unresolved.filter((n) => !pipelineChecks.includes(n))) {
    problems.push(
      `${name}: an unresolved Key Vault reference; App Service could not read the secret it names (the app's identity lacks Key Vault Secrets User on the vault, the role is still applying, or the secret does not exist yet). Once it can, have App Service fetch it again: azd hooks run postprovision`,
    );
  }
  return unresolved;
}

/** The pipeline's settings, or undefined with their problems added to the Azure app's. */
function readPipelineSettings(env: Environment, problems: string[]): PipelineSettings | undefined {
  try {
    return loadPipelineSettings(env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    problems.push(...error.problems);
    return undefined;
  }
}

/** Reads settings from the environment; what is malformed or missing goes to `problems`. */
interface SettingsReader {
  readonly env: Environment;
  readonly problems: string[];
  /** The trimmed value, or undefined when unset or blank. */
  value(name: string): string | undefined;
  withDefault(name: DefaultedSetting): string;
  /** The value when it is a URL of one of the protocols; undefined (a problem then) when it is not. */
  url(name: string, protocols: readonly string[]): string | undefined;
  missing(what: string, ...names: string[]): void;
}

function settingsReader(env: Environment, problems: string[]): SettingsReader {
  const value = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw ? raw : undefined;
  };
  return {
    env,
    problems,
    value,
    withDefault: (name) => value(name) ?? AZURE_SETTING_DEFAULTS[name],
    url(name, protocols) {
      const raw = value(name);
      if (raw === undefined) return undefined;
      try {
        if (protocols.includes(new URL(raw).protocol)) return raw;
      } catch {}
      problems.push(`${name}=${JSON.stringify(raw)}: must be a ${protocols.join(" or ")} URL`);
      return undefined;
    },
    missing(what, ...names) {
      problems.push(`${what}: set ${names.join(" or ")}`);
    },
  };
}

function readServiceBusConnection(read: SettingsReader): ServiceBusConnection | undefined {
  const sbString = read.value(sb);
  const sbNamespace = read.value(`${sb}__fullyQualifiedNamespace`);
  if (sbString) return { kind: "connectionString", connectionString: sbString };
  if (sbNamespace) return { kind: "identity", fullyQualifiedNamespace: sbNamespace };
  read.missing("Service Bus connection", sb, `${sb}__fullyQualifiedNamespace`);
  return undefined;
}

function readCosmosConnection(read: SettingsReader): CosmosConnection | undefined {
  const endpoint = read.url(`${cosmos}__endpoint`, ["https:"]);
  const key = read.value(`${cosmos}__key`);
  const selfSigned = read.value(`${cosmos}__allowSelfSignedCertificate`) ?? "false";
  if (selfSigned !== "true" && selfSigned !== "false") {
    read.problems.push(
      `${cosmos}__allowSelfSignedCertificate=${JSON.stringify(selfSigned)}: must be true or false`,
    );
  }
  if (selfSigned === "true" && !key) {
    read.problems.push(
      `${cosmos}__allowSelfSignedCertificate: only for the emulator, which needs ${cosmos}__key`,
    );
  }
  if (!endpoint) {
    if (!read.value(`${cosmos}__endpoint`)) read.missing("Cosmos DB connection", `${cosmos}__endpoint`);
    return undefined;
  }
  if (key) return { kind: "key", endpoint, key, allowSelfSignedCertificate: selfSigned === "true" };
  return { kind: "identity", endpoint };
}

function readSqlConnection(read: SettingsReader): SqlConnection | undefined {
  const sqlString = read.value(sql);
  const sqlServer = read.value(`${sql}__server`);
  const sqlDatabase = read.value(`${sql}__database`);
  const hosted = hostedOrders() !== undefined;
  if (hosted && (sqlString || sqlServer || sqlDatabase)) {
    read.problems.push(
      `${sql}: the host handed the app an orders table of its own; remove the ${sql} settings or have the host hand none`,
    );
  }
  if (sqlString) return { kind: "connectionString", connectionString: sqlString };
  if (sqlServer && sqlDatabase) return { kind: "identity", server: sqlServer, database: sqlDatabase };
  if (hosted) return { kind: "hosted" };
  read.missing("SQL connection", sql, `${sql}__server with ${sql}__database`);
  return undefined;
}

function readStorageConnection(read: SettingsReader): StorageConnection | undefined {
  const storageString = read.value(storage);
  const blobUri = read.url(`${storage}__blobServiceUri`, ["https:", "http:"]);
  if (storageString) return { kind: "connectionString", connectionString: storageString };
  if (blobUri) return { kind: "identity", blobServiceUri: blobUri };
  if (!read.value(`${storage}__blobServiceUri`)) {
    read.missing("Storage connection", storage, `${storage}__blobServiceUri`);
  }
  return undefined;
}

function readSchedule(read: SettingsReader, name: DefaultedSetting): string {
  const raw = read.withDefault(name);
  const problem = ncrontabProblem(raw);
  if (problem) {
    read.problems.push(
      `${name}=${JSON.stringify(raw)}: must be a six-field NCRONTAB expression, e.g. "0 */1 * * * *"; ${problem}`,
    );
  }
  return raw;
}

function readDataProtectionKeys(read: SettingsReader): KeyRing | undefined {
  const keys = read.value(DATA_PROTECTION_KEYS_SETTING);
  const keyRing = keys ? parseKeyRing(keys) : undefined;
  if (typeof keyRing === "string") {
    read.problems.push(keyRing);
    return undefined;
  }
  if (!keys) {
    read.problems.push(
      `${DATA_PROTECTION_KEYS_SETTING}: missing; set a key ring, <id>:<base64 of 32 random bytes> (e.g. k1:$(openssl rand -base64 32)); in Azure, a Key Vault reference to one`,
    );
  }
  return keyRing;
}

function readLeaseContainer(read: SettingsReader): string {
  const leaseContainer = read.withDefault(LEASE_CONTAINER_SETTING);
  if (!/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/.test(leaseContainer)) {
    read.problems.push(
      `${LEASE_CONTAINER_SETTING}=${JSON.stringify(leaseContainer)}: not a valid blob container name`,
    );
  }
  return leaseContainer;
}
