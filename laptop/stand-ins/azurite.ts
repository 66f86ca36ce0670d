import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlobServiceClient, type ContainerClient } from "@azure/storage-blob";

/** Azurite's documented development account; the key is public and works only against the emulator. */
const ACCOUNT = "devstoreaccount1";
const ACCOUNT_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/**
 * Loaded into Azurite's process: it exits when its standard input closes, which happens when the
 * process that started it ends in any way, SIGKILL included, so no emulator outlives its host.
 */
const EXIT_WITH_PARENT =
  "data:text/javascript,const stop=()=>process.kill(process.pid,'SIGTERM');process.stdin.on('end',stop).on('error',stop).resume()";

/** Azurite's blob service prints this once it listens, with the port it actually bound. */
const LISTENING = /Azurite Blob service successfully listens on (http:\/\/[^\s]+)/;

export interface AzuriteBlob {
  /** A storage connection string for the emulator's blob endpoint. */
  readonly connectionString: string;
  readonly blobEndpoint: string;
  stop(): Promise<void>;
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

/** Starts Azurite's blob service as a child process and resolves once it answers HTTP. */
export async function startAzuriteBlob(options: AzuriteBlobOptions = {}): Promise<AzuriteBlob> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const location = options.location ?? mkdtempSync(join(tmpdir(), "sas-azurite-"));
  const main = createRequire(import.meta.url).resolve("azurite/dist/src/blob/main.js");
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
      "--blobHost",
      options.host ?? "127.0.0.1",
      "--blobPort",
      String(options.port ?? 0),
    ],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const cleanUp = async () => {
    process.off("exit", killOnExit);
    await stopChild(child);
    if (!options.location) rmSync(location, { recursive: true, force: true });
  };

  try {
    const address = await listeningAddress(child, timeoutMs);
    const blobEndpoint = `${address}/${ACCOUNT}`;
    await untilAnswering(blobEndpoint, timeoutMs);
    return {
      connectionString: `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT};AccountKey=${ACCOUNT_KEY};BlobEndpoint=${blobEndpoint};`,
      blobEndpoint,
      stop: cleanUp,
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

function listeningAddress(child: ChildProcess, timeoutMs: number): Promise<string> {
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
      const match = LISTENING.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
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
