import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Logger } from "../../src/ports/logger.js";
import type { FunctionRegistry } from "../worker/registration-capture.js";
import { durableFunctionsOf } from "./function-manifest.js";
import { type InvocationRequest, runInvocation } from "./worker-invocation.js";

/** What the extension host says once it runs: its client binding data, versions, and the options applied. */
export interface ExtensionReady {
  readonly clientData: ExtensionClientData;
  readonly extensionVersion: string;
  readonly coreVersion: string;
  readonly azureStorageVersion: string;
  readonly hubName: string;
  readonly maxConcurrentActivityFunctions: number;
  readonly maxConcurrentOrchestratorFunctions: number;
  readonly storageProvider: Readonly<Record<string, unknown>>;
}

/** The binding data the extension gives a durable client input (what `df.getClient` reads). */
export interface ExtensionClientData {
  readonly taskHubName: string;
  readonly rpcBaseUrl: string;
  readonly baseUrl: string;
  readonly [field: string]: unknown;
}

export interface ExtensionHostOptions {
  /** The built host (extension-build.ts). */
  readonly dll: string;
  readonly registry: FunctionRegistry;
  readonly hostJsonPath: string;
  /** Where the management links point, with the extension's system key as `code`. */
  readonly webhookUrl: string;
  /** The app settings, as the Functions host gives them to itself and its extensions: environment variables. */
  readonly settings: Readonly<Record<string, string>>;
  readonly logger: Logger;
  /**
   * This worker's name in the task hub's partition leases, unique among the hosts sharing the hub (as
   * the Functions host makes it from the App Service stamp and role instance); default the machine's name.
   */
  readonly workerId?: string;
  /** The host's own log lines (JSON, one a line); default this process's standard error. */
  readonly log?: NodeJS.WritableStream;
  readonly startTimeoutMs?: number;
  /** Called when the host ends without being asked to. */
  readonly onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
}

export interface ExtensionHost {
  readonly ready: ExtensionReady;
  /** The .NET process's id. */
  readonly pid: number;
  /** Asks the host to stop (it finishes what runs, still served by this process) and waits for it to end. */
  close(): Promise<void>;
}

const STOP_TIMEOUT_MS = 45_000;

/**
 * Starts the extension host as a child process and serves it as the Node.js worker serves the
 * Functions host: every invocation it sends runs here, through the app's registered handler. The
 * child ends when asked, and when this process ends in any way, since its channel closes then.
 */
export async function startExtensionHost(options: ExtensionHostOptions): Promise<ExtensionHost> {
  const functions = durableFunctionsOf(options.registry);
  const child = spawn("dotnet", [options.dll], {
    env: {
      ...outsideAzure({ ...process.env, ...options.settings }),
      ...(options.workerId
        ? { WEBSITE_CURRENT_STAMPNAME: "sas-host", RoleInstanceId: options.workerId }
        : {}),
      FUNCTIONS_WORKER_RUNTIME: "node",
      DOTNET_NOLOGO: "1",
      DOTNET_CLI_TELEMETRY_OPTOUT: "1",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const tail = forwardLog(child, options.log ?? process.stderr);
  let running = false;
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      if (running && !stopping) {
        options.logger.error("extension.exited", {
          pid: child.pid,
          code,
          signal,
          lastLines: tail.slice(-20),
        });
        options.onExit?.(code, signal);
      }
      resolve();
    }),
  );
  const send = (message: unknown) => child.stdin?.write(`${JSON.stringify(message)}\n`);
  child.stdin?.on("error", () => {});
  const ready = serve(child, options, send);
  send({ type: "start", functions, hostJson: options.hostJsonPath, webhookUrl: options.webhookUrl });
  const close = async () => {
    stopping = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    send({ type: "stop" });
    const stuck = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(stuck);
  };
  try {
    const answered = await withTimeout(ready, exited, options.startTimeoutMs ?? 120_000, tail);
    running = true;
    return { ready: answered, pid: child.pid ?? 0, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The variables by which the extension tells it runs in App Service (and then writes its telemetry to
 * standard output in the platform's format): never so here, though a machine may have one set for
 * reasons of its own (CONTAINER_NAME, in a container).
 */
const PLATFORM_VARIABLES = [
  "CONTAINER_NAME",
  "WEBSITE_INSTANCE_ID",
  "WEBSITE_SKU",
  "FUNCTIONS_LOGS_MOUNT_PATH",
];

function outsideAzure(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !PLATFORM_VARIABLES.includes(name)));
}

/** Answers the child's invocations; resolves with its ready message, rejects with its failure. */
function serve(
  child: ChildProcess,
  options: ExtensionHostOptions,
  send: (message: unknown) => void,
): Promise<ExtensionReady> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      const message = parsed(line);
      if (!message) options.logger.warn("extension.output", { line });
      else if (message.type === "ready") resolve(message as unknown as ExtensionReady);
      else if (message.type === "failed") reject(new Error(`the extension host failed: ${message.message}`));
      else if (message.type === "invoke") void invoke(message, options, send);
    });
  });
}

/** A message of the channel, or undefined for a line that is not one (nothing else should write there). */
function parsed(line: string): ({ type: string } & Record<string, unknown>) | undefined {
  try {
    const message = JSON.parse(line) as unknown;
    return typeof message === "object" && message !== null && "type" in message
      ? (message as { type: string } & Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

async function invoke(
  message: Record<string, unknown>,
  options: ExtensionHostOptions,
  send: (message: unknown) => void,
): Promise<void> {
  const id = String(message.id);
  const fn = options.registry.get(String(message.functionName));
  const request = {
    invocationId: id,
    trigger: message.trigger,
    inputs: message.inputs,
  } as InvocationRequest;
  const result = fn
    ? await runInvocation(fn, request, options.logger)
    : { ok: false, error: `no function ${String(message.functionName)} is registered`, stack: "" };
  send({ type: "result", id, ...result });
}

/** The child's log lines, passed on whole, and the last of them kept for a failure's report. */
function forwardLog(child: ChildProcess, log: NodeJS.WritableStream): string[] {
  const tail: string[] = [];
  const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
  lines.on("line", (line) => {
    log.write(`${line}\n`);
    tail.push(line);
    if (tail.length > 50) tail.shift();
  });
  return tail;
}

async function withTimeout<T>(
  work: Promise<T>,
  exited: Promise<void>,
  timeoutMs: number,
  tail: readonly string[],
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const failure = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the extension host did not start within ${timeoutMs} ms\n${tail.join("\n")}`)),
      timeoutMs,
    );
    void exited.then(() =>
      reject(new Error(`the extension host ended before it was ready\n${tail.join("\n")}`)),
    );
  });
  try {
    return await Promise.race([work, failure]);
  } finally {
    clearTimeout(timer);
  }
}
