/**
 * The stand-alone partner's settings (partner/main.ts), read from the environment as App Service passes
 * its app settings. Every setting is checked before anything is opened; all the invalid ones are named
 * in one error.
 */
import { FAULT_KINDS, type FaultKind, type PartnerFaults } from "./faults.js";
import type { LedgerContainerPlace } from "./ledger-blob.js";

export const PARTNER_SETTINGS = {
  port: "PORT",
  host: "PARTNER_HOST",
  accessKey: "PARTNER_ACCESS_KEY",
  containerUrl: "PARTNER_LEDGER_CONTAINER_URL",
  clientId: "AZURE_CLIENT_ID",
  connectionString: "PARTNER_LEDGER_CONNECTION_STRING",
  container: "PARTNER_LEDGER_CONTAINER",
  file: "PARTNER_LEDGER_FILE",
  slowMs: "PARTNER_SLOW_MS",
  seed: "PARTNER_SEED",
} as const;

/** The setting of each fault rate, and its default. */
export const FAULT_SETTINGS: Readonly<
  Record<FaultKind, { readonly name: string; readonly fallback: number }>
> = {
  transient: { name: "PARTNER_FAULT_TRANSIENT", fallback: 0.1 },
  permanent: { name: "PARTNER_FAULT_PERMANENT", fallback: 0.01 },
  slow: { name: "PARTNER_FAULT_SLOW", fallback: 0.03 },
  lostReply: { name: "PARTNER_FAULT_LOST_REPLY", fallback: 0.01 },
};

/** Where the books are kept: an append-blob journal (Azure, Azurite) or a SQLite file (a laptop). */
export type PartnerBooks = LedgerContainerPlace | { readonly kind: "file"; readonly path: string };

export interface PartnerSettings {
  readonly port: number;
  readonly host: string;
  readonly accessKey: string;
  readonly books: PartnerBooks;
  readonly faults: PartnerFaults;
  readonly slowMs: number;
  readonly seed: number;
}

export class PartnerSettingsError extends Error {
  override readonly name = "PartnerSettingsError";
  constructor(readonly problems: readonly string[]) {
    super(`invalid partner settings: ${problems.join("; ")}`);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const KEY_VAULT_REFERENCE = "@Microsoft.KeyVault(";
const CONTAINER_NAME = /^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
const SLOW_MS_MAX = 3_600_000;

export function loadPartnerSettings(env: Env): PartnerSettings {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    if (value === undefined || value === "") return undefined;
    if (value.startsWith(KEY_VAULT_REFERENCE)) {
      problems.push(
        `${name} is an unresolved Key Vault reference: give the app's identity access to the secret`,
      );
      return undefined;
    }
    return value;
  };
  const port = wholeNumber(read, PARTNER_SETTINGS.port, 7072, { min: 0, max: 65_535 }, problems);
  const host = read(PARTNER_SETTINGS.host) ?? "0.0.0.0";
  const accessKey = read(PARTNER_SETTINGS.accessKey);
  if (accessKey === undefined && !problems.some((p) => p.startsWith(PARTNER_SETTINGS.accessKey))) {
    problems.push(`${PARTNER_SETTINGS.accessKey} is required: the key every caller must send`);
  }
  const books = booksFrom(read, problems);
  const faults = faultsFrom(read, problems);
  const slowMs = wholeNumber(read, PARTNER_SETTINGS.slowMs, 15_000, { min: 0, max: SLOW_MS_MAX }, problems);
  const seed = wholeNumber(read, PARTNER_SETTINGS.seed, 7, { min: -(2 ** 31), max: 2 ** 31 - 1 }, problems);
  if (problems.length > 0 || accessKey === undefined || books === undefined) {
    throw new PartnerSettingsError(problems);
  }
  return { port, host, accessKey, books, faults, slowMs, seed };
}

type Read = (name: string) => string | undefined;

/** Exactly one place for the books. */
function booksFrom(read: Read, problems: string[]): PartnerBooks | undefined {
  const url = read(PARTNER_SETTINGS.containerUrl);
  const connectionString = read(PARTNER_SETTINGS.connectionString);
  const container = read(PARTNER_SETTINGS.container);
  const path = read(PARTNER_SETTINGS.file);
  const clientId = read(PARTNER_SETTINGS.clientId);
  const given = [url, connectionString, path].filter((value) => value !== undefined).length;
  if (given !== 1) {
    const choices = `${PARTNER_SETTINGS.containerUrl}, ${PARTNER_SETTINGS.connectionString} or ${PARTNER_SETTINGS.file}`;
    problems.push(
      `the books: set exactly one of ${choices}; ${given === 0 ? "none is" : `${given} are`} set`,
    );
    return undefined;
  }
  if (container !== undefined && connectionString === undefined) {
    problems.push(`${PARTNER_SETTINGS.container} goes with ${PARTNER_SETTINGS.connectionString} only`);
  }
  if (url !== undefined) return containerUrl(url, clientId, problems);
  if (connectionString !== undefined) {
    if (!/(^|;)\s*(BlobEndpoint|AccountName)=|UseDevelopmentStorage=true/i.test(connectionString)) {
      problems.push(
        `${PARTNER_SETTINGS.connectionString} must be a storage connection string (AccountName=...;...)`,
      );
    }
    const name = container ?? "partner-ledger";
    if (!CONTAINER_NAME.test(name)) {
      problems.push(
        `${PARTNER_SETTINGS.container} must be a container name (3 to 63 lowercase letters, digits and single hyphens); got ${JSON.stringify(name)}`,
      );
    }
    return { kind: "connectionString", connectionString, container: name };
  }
  return { kind: "file", path: path as string };
}

function containerUrl(
  url: string,
  clientId: string | undefined,
  problems: string[],
): PartnerBooks | undefined {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  const container =
    parsed?.pathname
      .split("/")
      .filter((part) => part !== "")
      .at(-1) ?? "";
  if (parsed?.protocol !== "https:" || parsed.search !== "" || !CONTAINER_NAME.test(container)) {
    problems.push(
      `${PARTNER_SETTINGS.containerUrl} must be the https URL of a blob container, such as https://<account>.blob.core.windows.net/partner-ledger; got ${JSON.stringify(url)}`,
    );
    return undefined;
  }
  return { kind: "containerUrl", url, ...(clientId !== undefined ? { clientId } : {}) };
}

function faultsFrom(read: Read, problems: string[]): PartnerFaults {
  const faults = {} as PartnerFaults;
  let valid = true;
  for (const kind of FAULT_KINDS) {
    const { name, fallback } = FAULT_SETTINGS[kind];
    const raw = read(name);
    const rate = raw === undefined ? fallback : Number(raw);
    if (!/^(\d+(\.\d*)?|\.\d+)$/.test(raw ?? "0") || rate > 1) {
      problems.push(`${name} must be a rate from 0 to 1; got ${JSON.stringify(raw)}`);
      valid = false;
    }
    faults[kind] = rate;
  }
  const sum = FAULT_KINDS.reduce((total, kind) => total + faults[kind], 0);
  if (valid && sum > 1 + 1e-9) {
    const names = FAULT_KINDS.map((kind) => FAULT_SETTINGS[kind].name).join(" + ");
    problems.push(`${names} must be at most 1; got ${sum}`);
  }
  return faults;
}

function wholeNumber(
  read: Read,
  name: string,
  fallback: number,
  range: { readonly min: number; readonly max: number },
  problems: string[],
): number {
  const raw = read(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw) || value < range.min || value > range.max) {
    problems.push(
      `${name} must be a whole number from ${range.min} to ${range.max}; got ${JSON.stringify(raw)}`,
    );
    return fallback;
  }
  return value;
}
