import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { PartnerControlState } from "../../../partner/control-contract.js";
import type { PartnerFaults } from "../../../partner/faults.js";
import { type LedgerData, ledgerView, type PartnerLedger } from "../../../partner/ledger.js";
import type { LogLevel, LogLine } from "../../../src/adapters/logging/json-logger.js";
import type { Logger } from "../../../src/ports/logger.js";

/** The simulated partner running on its own thread, as a remote service runs on its own machine. */
export interface PartnerThread {
  /** Base URL, e.g. `http://127.0.0.1:41234`, without a trailing slash. */
  readonly url: string;
  ledger(): Promise<PartnerLedger>;
  setFaults(faults: Partial<PartnerFaults>): Promise<void>;
  /** What the partner's `GET /control` answers. */
  control(): Promise<PartnerControlState>;
  /** As `POST /control/faults`: merged over the current rates; rejects with a RangeError naming a wrong rate. */
  changeFaults(faults: Partial<PartnerFaults>): Promise<PartnerControlState>;
  /** As `POST /control/outage`; rejects with a RangeError for seconds out of 1 to 86,400. */
  startOutage(seconds: number): Promise<PartnerControlState>;
  /** As `DELETE /control/outage`. */
  endOutage(): Promise<PartnerControlState>;
  reset(): Promise<void>;
  /** Stops the service (dropping pending slow answers) and ends the thread. */
  close(): Promise<void>;
}

export interface PartnerThreadOptions {
  /** The key every request but `GET /health` must carry in `x-partner-key`; default none: open to all. */
  readonly accessKey?: string;
  readonly faults?: Partial<PartnerFaults>;
  readonly seed?: number;
  readonly slowMs?: number;
  readonly host?: string;
  readonly port?: number;
  /** Where the partner's log lines go; they arrive in batches, each line as the partner wrote it. */
  readonly logger: Logger;
  readonly logLevel?: LogLevel;
}

export interface PartnerWorkerData {
  readonly accessKey?: string;
  readonly faults?: Partial<PartnerFaults>;
  readonly seed?: number;
  readonly slowMs?: number;
  readonly host?: string;
  readonly port?: number;
  readonly logLevel: LogLevel;
}

export type PartnerThreadRequest =
  | { readonly type: "ledger"; readonly id: number }
  | { readonly type: "setFaults"; readonly id: number; readonly faults: Partial<PartnerFaults> }
  | { readonly type: "control"; readonly id: number }
  | { readonly type: "changeFaults"; readonly id: number; readonly faults: Partial<PartnerFaults> }
  | { readonly type: "startOutage"; readonly id: number; readonly seconds: number }
  | { readonly type: "endOutage"; readonly id: number }
  | { readonly type: "reset"; readonly id: number }
  | { readonly type: "close"; readonly id: number };

export type PartnerWorkerMessage =
  | { readonly type: "started"; readonly url: string }
  | { readonly type: "log"; readonly lines: readonly LogLine[] }
  | { readonly type: "ledger"; readonly id: number; readonly data: LedgerData }
  | { readonly type: "control"; readonly id: number; readonly state: PartnerControlState }
  /** A request the partner refused: a RangeError's message (a wrong rate or outage length). */
  | { readonly type: "refused"; readonly id: number; readonly message: string }
  /** A change the partner could not make, such as one its books could not keep. */
  | { readonly type: "failed"; readonly id: number; readonly message: string }
  | { readonly type: "done"; readonly id: number };

/**
 * Starts the simulated partner on a worker thread. Its HTTP server then parses and answers on the
 * second core instead of taking turns with the pipeline on the first: on a 2-core machine that is
 * about a fifth more orders per second. Tests that need the partner on a virtual clock use
 * `startPartnerService` in their own thread instead.
 */
export async function startPartnerThread(options: PartnerThreadOptions): Promise<PartnerThread> {
  const worker = startWorker(workerDataOf(options));
  const replies = new Map<number, (message: PartnerWorkerMessage) => void>();
  let nextId = 0;
  let failure: Error | undefined;
  let ended = false;

  const url = await new Promise<string>((resolve, reject) => {
    worker.on("message", (message: PartnerWorkerMessage) => {
      if (message.type === "started") resolve(message.url);
      else if (message.type === "log") forward(options.logger, message.lines);
      else {
        replies.get(message.id)?.(message);
        replies.delete(message.id);
      }
    });
    worker.on("error", (error) => {
      failure = error;
      options.logger.error("partner.thread.failed", { error });
      reject(error);
    });
    worker.once("exit", (code) => {
      ended = true;
      const error = failure ?? new Error(`the partner thread exited (code ${code})`);
      for (const reply of replies.values()) reply({ type: "done", id: -1 });
      replies.clear();
      reject(error);
    });
  });

  const ask: Ask = (request) =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      if (ended) return reject(new Error("the partner thread has ended"));
      const id = nextId++;
      replies.set(id, resolve);
      worker.postMessage({ ...request, id } as PartnerThreadRequest);
    });
  return threadControls(url, worker, ask);
}

/** A request to the thread before it is given its id. */
type Ask = (
  request: PartnerThreadRequest extends infer R ? (R extends unknown ? Omit<R, "id"> : never) : never,
) => Promise<PartnerWorkerMessage>;

function workerDataOf(options: PartnerThreadOptions): PartnerWorkerData {
  return {
    logLevel: options.logLevel ?? "info",
    ...(options.accessKey !== undefined ? { accessKey: options.accessKey } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.slowMs !== undefined ? { slowMs: options.slowMs } : {}),
    ...(options.host ? { host: options.host } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
  };
}

function threadControls(url: string, worker: Worker, ask: Ask): PartnerThread {
  let closed: Promise<void> | undefined;
  return {
    url,
    ledger: async () => {
      const reply = await ask({ type: "ledger" });
      if (reply.type !== "ledger") throw new Error("the partner thread ended before answering");
      return ledgerView(reply.data);
    },
    setFaults: async (faults) => {
      await ask({ type: "setFaults", faults });
    },
    control: () => controlOf(ask({ type: "control" })),
    changeFaults: (faults) => controlOf(ask({ type: "changeFaults", faults })),
    startOutage: (seconds) => controlOf(ask({ type: "startOutage", seconds })),
    endOutage: () => controlOf(ask({ type: "endOutage" })),
    reset: async () => {
      await ask({ type: "reset" });
    },
    // Resolves however the thread ends, even if it had already failed: closing must not stop a shutdown.
    close: () => {
      closed ??= ask({ type: "close" })
        .catch(() => undefined)
        .then(async () => {
          await worker.terminate();
        });
      return closed;
    },
  };
}

async function controlOf(reply: Promise<PartnerWorkerMessage>): Promise<PartnerControlState> {
  const message = await reply;
  if (message.type === "refused") throw new RangeError(message.message);
  if (message.type === "failed") throw new Error(`the partner could not make the change: ${message.message}`);
  if (message.type !== "control") throw new Error("the partner thread ended before answering");
  return message.state;
}

function forward(logger: Logger, lines: readonly LogLine[]): void {
  for (const { time, level, event, ...fields } of lines) logger[level](event, { ...fields, loggedAt: time });
}

/**
 * The worker runs the compiled module; when the host itself runs from TypeScript source (under tsx, or
 * in tests), the worker first registers tsx's loader, which worker threads do not inherit.
 */
function startWorker(data: PartnerWorkerData): Worker {
  if (!import.meta.url.endsWith(".ts")) {
    return new Worker(new URL("./partner-worker.js", import.meta.url), { workerData: data });
  }
  const entry = new URL("./partner-worker.ts", import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi())}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: data });
}

function tsxApi(): string {
  if (typeof import.meta.resolve === "function") return import.meta.resolve("tsx/esm/api");
  const manifest = createRequire(import.meta.url).resolve("tsx/package.json");
  return pathToFileURL(join(dirname(manifest), "dist/esm/api/index.mjs")).href;
}
