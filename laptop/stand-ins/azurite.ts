import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlobServiceClient, type ContainerClient } from "@azure/storage-blob";

/** Azurite's documented development account; the key is public and works only against the emulator. */
export const AZURITE_ACCOUNT = "devstoreaccount1";
export const AZURITE_ACCOUNT_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/**
 * Loaded into Azurite's process: it exits when its standard input closes, which happens when the
 * process that started it ends in any way, SIGKILL included, so no emulator outlives its host.
 */
const EXIT_WITH_PARENT =
  "data:text/javascript,const stop=()=>process.kill(process.pid,'SIGTERM');process.stdin.on('end',stop).on('error',stop).resume()";

/** Azurite prints one of these per service once it listens, with the address it actually bound. */
const LISTENING =
  /Azurite (Blob|Queue|Table) service (?:is )?successfully (?:listens on|listening at) (http:\/\/[^\s]+)/g;

export interface AzuriteBlob {
  /** A storage connection string for the emulator's endpoints. */
  readonly connectionString: string;
  readonly blobEndpoint: string;
  stop(): Promise<void>;
}

/** Azurite with its queue and table services too: what the Durable Task extension's Azure Storage backend uses. */
export interface AzuriteStorage extends AzuriteBlob {
  readonly queueEndpoint: string;
  readonly tableEndpoint: string;
}

/**
 * A container name of its own on the emulator, and a new client for it on each call: separate HTTP
 * pipelines, as separate hosts have. The container is not created; `dispose` deletes it if it was.
 */
export function freshContainer(azurite: AzuriteBlob, prefix = "leases") {
  const containerName = `${prefix}-${randomUUID()}`;
  const container = (): ContainerClient =>
    BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient(containerName);
  return {
    containerName,
    container,
    dispose: async () => {
      await container().deleteIfExists();
    },
  };
}

export interface AzuriteBlobOptions {
  readonly timeoutMs?: number;
  /** Where Azurite keeps its data, kept afterwards; default a temporary directory, removed on stop. */
  readonly location?: string;
  /** Default 127.0.0.1 and a port the OS picks. */
  readonly host?: string;
  readonly port?: number;
}

export interface AzuriteStorageOptions extends Omit<AzuriteBlobOptions, "port"> {
  /** Each service's port; default one the OS picks. */
  readonly ports?: { readonly blob?: number; readonly queue?: number; readonly table?: number };
}

/** Starts Azurite's blob service as a child process and resolves once it answers HTTP. */
export async function startAzuriteBlob(options: AzuriteBlobOptions = {}): Promise<AzuriteBlob> {
  const host = options.host ?? "127.0.0.1";
  const started = await startAzuriteProcess(
    "azurite/dist/src/blob/main.js",
    ["--blobHost", host, "--blobPort", String(options.port ?? 0)],
    ["Blob"],
    options,
  );
  const blobEndpoint = `${started.addresses.Blob}/${AZURITE_ACCOUNT}`;
  return {
    connectionString: `${ACCOUNT_PART}BlobEndpoint=${blobEndpoint};`,
    blobEndpoint,
    stop: started.stop,
  };
}

/** Starts Azurite's blob, queue and table services in one child process; resolves once all answer. */
export async function startAzuriteStorage(options: AzuriteStorageOptions = {}): Promise<AzuriteStorage> {
  const host = options.host ?? "127.0.0.1";
  const ports = options.ports ?? {};
  const args = (["blob", "queue", "table"] as const).flatMap((service) => [
    `--${service}Host`,
    host,
    `--${service}Port`,
    String(ports[service] ?? 0),
  ]);
  const started = await startAzuriteProcess(
    "azurite/dist/src/azurite.js",
    args,
    ["Blob", "Queue", "Table"],
    options,
  );
  const [blobEndpoint, queueEndpoint, tableEndpoint] = (["Blob", "Queue", "Table"] as const).map(
    (service) => `${started.addresses[service]}/${AZURITE_ACCOUNT}`,
  ) as [string, string, string];
  return {
    connectionString: `${ACCOUNT_PART}BlobEndpoint=${blobEndpoint};QueueEndpoint=${queueEndpoint};TableEndpoint=${tableEndpoint};`,
    blobEndpoint,
    queueEndpoint,
    tableEndpoint,
    stop: started.stop,
  };
}

const ACCOUNT_PART = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_ACCOUNT_KEY};`;

type Service = "Blob" | "Queue" | "Table";

/** Runs one of Azurite's entry points, waits until each of `services` says where it listens and answers. */
async function startAzuriteProcess(
  entry: string,
  serviceArgs: readonly string[],
  services: readonly Service[],
  options: { readonly timeoutMs?: number; readonly location?: string },
) {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const location = options.location ?? mkdtempSync(join(tmpdir(), "sas-azurite-"));
  mkdirSync(location, { recursive: true });
  const pidFile = join(location, "azurite.pid");
  await untilGone(pidFile, timeoutMs);
  const main = createRequire(import.meta.url).resolve(entry);
  const child = spawn(
    process.execPath,
    [
      "--import",
      EXIT_WITH_PARENT,
      main,
      "--silent",
      "--disableTelemetry",
      "--skipApiVersionCheck",
      "--location",
      location,
      ...serviceArgs,
    ],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  if (child.pid) writeFileSync(pidFile, String(child.pid));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async () => {
    process.off("exit", killOnExit);
    await stopChild(child);
    rmSync(pidFile, { force: true });
    if (!options.location) rmSync(location, { recursive: true, force: true });
  };

  try {
    const addresses = await listeningAddresses(child, services, timeoutMs);
    for (const service of services)
      await untilAnswering(`${addresses[service]}/${AZURITE_ACCOUNT}`, timeoutMs);
    return { addresses, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Waits while an earlier Azurite on the same data is still running: one whose parent was killed stops
 * on its own, writing its data as it goes, and a new one that read the files before that would lose
 * what it wrote last (queue messages sent just before a crash, say).
 */
async function untilGone(pidFile: string, timeoutMs: number): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, "utf8"));
  } catch {
    return;
  }
  const deadline = Date.now() + timeoutMs;
  // At most the start's own timeout: past it, the pid is taken to be another process's now.
  while (Number.isInteger(pid) && pid > 0 && alive(pid) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function listeningAddresses(
  child: ChildProcess,
  services: readonly Service[],
  timeoutMs: number,
): Promise<Record<Service, string>> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(
      () => fail(new Error(`Azurite did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(new Error(`${error.message}\nstdout: ${stdout}\nstderr: ${stderr}`));
    };
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const found: Partial<Record<Service, string>> = {};
      for (const [, service, address] of stdout.matchAll(LISTENING)) {
        if (address) found[service as Service] = address;
      }
      if (services.every((service) => found[service])) {
        clearTimeout(timer);
        resolve(found as Record<Service, string>);
      }
    });
    child.once("error", fail);
    child.once("exit", (code, signal) => fail(new Error(`Azurite exited early (${code ?? signal})`)));
  });
}

async function untilAnswering(endpoint: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      // Unauthenticated, so refused; any HTTP answer proves the service is up.
      await fetch(`${endpoint}?comp=list`);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Closing its input is what stops it (EXIT_WITH_PARENT); a signal alone leaves that input holding it open.
  child.stdin?.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
