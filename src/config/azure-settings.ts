import type { KeyRing } from "../domain/key-ring.js";
import { DATA_PROTECTION_KEYS_SETTING, parseKeyRing } from "./data-protection.js";
import {
  CONNECTION_NAMES,
  LEASE_CONTAINER_SETTING,
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
  /** Local only: the orders table in a SQLite file, for a laptop without SQL Server (`sas host` sets it). */
  | { readonly kind: "sqliteFile"; readonly file: string };

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

/** Defaults of the settings that have one; the README's configuration table lists the same. */
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
  `${sql}__sqliteFile`,
  storage,
  `${storage}__blobServiceUri`,
  LEASE_CONTAINER_SETTING,
  PARTNER_URL_SETTING,
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
  let pipeline: PipelineSettings | undefined;
  try {
    pipeline = loadPipelineSettings(env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    problems.push(...error.problems);
  }
  const value = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw ? raw : undefined;
  };
  const withDefault = (name: DefaultedSetting): string => value(name) ?? AZURE_SETTING_DEFAULTS[name];
  const url = (name: string, protocols: readonly string[]): string | undefined => {
    const raw = value(name);
    if (raw === undefined) return undefined;
    try {
      if (protocols.includes(new URL(raw).protocol)) return raw;
    } catch {}
    problems.push(`${name}=${JSON.stringify(raw)}: must be a ${protocols.join(" or ")} URL`);
    return undefined;
  };
  const missing = (what: string, ...names: string[]): void => {
    problems.push(`${what}: set ${names.join(" or ")}`);
  };

  let serviceBus: ServiceBusConnection | undefined;
  const sbString = value(sb);
  const sbNamespace = value(`${sb}__fullyQualifiedNamespace`);
  if (sbString) serviceBus = { kind: "connectionString", connectionString: sbString };
  else if (sbNamespace) serviceBus = { kind: "identity", fullyQualifiedNamespace: sbNamespace };
  else missing("Service Bus connection", sb, `${sb}__fullyQualifiedNamespace`);

  let cosmosConnection: CosmosConnection | undefined;
  const endpoint = url(`${cosmos}__endpoint`, ["https:"]);
  const key = value(`${cosmos}__key`);
  const selfSigned = value(`${cosmos}__allowSelfSignedCertificate`) ?? "false";
  if (selfSigned !== "true" && selfSigned !== "false") {
    problems.push(
      `${cosmos}__allowSelfSignedCertificate=${JSON.stringify(selfSigned)}: must be true or false`,
    );
  }
  if (selfSigned === "true" && !key) {
    problems.push(`${cosmos}__allowSelfSignedCertificate: only for the emulator, which needs ${cosmos}__key`);
  }
  if (!endpoint) {
    if (!value(`${cosmos}__endpoint`)) missing("Cosmos DB connection", `${cosmos}__endpoint`);
  } else if (key) {
    cosmosConnection = { kind: "key", endpoint, key, allowSelfSignedCertificate: selfSigned === "true" };
  } else {
    cosmosConnection = { kind: "identity", endpoint };
  }

  let sqlConnection: SqlConnection | undefined;
  const sqlString = value(sql);
  const sqlServer = value(`${sql}__server`);
  const sqlDatabase = value(`${sql}__database`);
  const sqliteFile = value(`${sql}__sqliteFile`);
  if (sqliteFile && (sqlString || sqlServer || sqlDatabase)) {
    problems.push(`${sql}__sqliteFile: replaces SQL Server; remove it or the other ${sql} settings`);
  } else if (sqliteFile && env.WEBSITE_INSTANCE_ID) {
    problems.push(
      `${sql}__sqliteFile: only for a local host; in Azure set ${sql}__server and ${sql}__database`,
    );
  }
  if (sqlString) sqlConnection = { kind: "connectionString", connectionString: sqlString };
  else if (sqlServer && sqlDatabase)
    sqlConnection = { kind: "identity", server: sqlServer, database: sqlDatabase };
  else if (sqliteFile) sqlConnection = { kind: "sqliteFile", file: sqliteFile };
  else missing("SQL connection", sql, `${sql}__server with ${sql}__database`);

  let storageConnection: StorageConnection | undefined;
  const storageString = value(storage);
  const blobUri = url(`${storage}__blobServiceUri`, ["https:", "http:"]);
  if (storageString) storageConnection = { kind: "connectionString", connectionString: storageString };
  else if (blobUri) storageConnection = { kind: "identity", blobServiceUri: blobUri };
  else if (!value(`${storage}__blobServiceUri`))
    missing("Storage connection", storage, `${storage}__blobServiceUri`);

  const partnerUrl = url(PARTNER_URL_SETTING, ["https:", "http:"]);
  if (!partnerUrl && !value(PARTNER_URL_SETTING)) missing("partner service", PARTNER_URL_SETTING);

  const schedule = (name: DefaultedSetting): string => {
    const raw = withDefault(name);
    const problem = ncrontabProblem(raw);
    if (problem) {
      problems.push(
        `${name}=${JSON.stringify(raw)}: must be a six-field NCRONTAB expression, e.g. "0 */1 * * * *"; ${problem}`,
      );
    }
    return raw;
  };
  const starterSchedule = schedule(TIMER_SCHEDULE_SETTINGS.starter);
  const supervisorSchedule = schedule(TIMER_SCHEDULE_SETTINGS.supervisor);
  const retentionSchedule = schedule(TIMER_SCHEDULE_SETTINGS.retention);

  const keys = value(DATA_PROTECTION_KEYS_SETTING);
  const dataProtectionKeys = keys ? parseKeyRing(keys) : undefined;
  if (typeof dataProtectionKeys === "string") problems.push(dataProtectionKeys);
  else if (!keys) {
    problems.push(
      `${DATA_PROTECTION_KEYS_SETTING}: missing; set a key ring, <id>:<base64 of 32 random bytes> (e.g. k1:$(openssl rand -base64 32)); in Azure, a Key Vault reference to one`,
    );
  }

  const leaseContainer = withDefault(LEASE_CONTAINER_SETTING);
  if (!/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/.test(leaseContainer)) {
    problems.push(
      `${LEASE_CONTAINER_SETTING}=${JSON.stringify(leaseContainer)}: not a valid blob container name`,
    );
  }

  if (
    problems.length > 0 ||
    !pipeline ||
    !serviceBus ||
    !cosmosConnection ||
    !sqlConnection ||
    !storageConnection ||
    !partnerUrl ||
    !dataProtectionKeys ||
    typeof dataProtectionKeys === "string"
  ) {
    throw new SettingsError(problems);
  }
  return {
    pipeline,
    serviceBus,
    cosmos: cosmosConnection,
    cosmosDatabase: withDefault(`${cosmos}__database`),
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
