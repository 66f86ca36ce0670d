import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";

export interface BackgroundCheckpointOptions {
  /** How often the worker copies committed pages from the WAL into the database (default 20 ms). */
  readonly intervalMs?: number;
  /**
   * When the WAL holds more pages than this (default 8,192, 32 MiB at 4 KiB pages), the worker also
   * runs a RESTART checkpoint, which briefly holds writers back so the next commit starts the WAL over.
   */
  readonly restartAfterPages?: number;
}

export interface BackgroundCheckpoints {
  /** Resolves once the worker has its connection open and checkpoints are running. */
  readonly ready: Promise<void>;
  /** Stops the worker and hands checkpointing back to SQLite's automatic checkpoints. */
  stop(): Promise<void>;
}

/** SQLite's own default for `wal_autocheckpoint`, restored when the worker stops or fails. */
const AUTOMATIC_CHECKPOINT_PAGES = 1_000;

/*
 * The worker's code, run as a CommonJS script. It has its own connection to the file: a checkpoint
 * there copies pages and syncs the file on the second core, while the main thread goes on committing.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma("busy_timeout = 5000");
parentPort.postMessage("ready");
const checkpoint = () => {
  const [result] = db.pragma("wal_checkpoint(PASSIVE)");
  if (result && result.log > workerData.restartAfterPages) db.pragma("wal_checkpoint(RESTART)");
};
const timer = setInterval(() => {
  try {
    checkpoint();
  } catch (error) {
    clearInterval(timer);
    db.close();
    throw error;
  }
}, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Moves WAL checkpoints off the thread that commits. With automatic checkpoints, every thousandth
 * page committed makes that commit copy the WAL into the database and sync it, which roughly doubles
 * the cost of a small commit; here a worker thread does that work instead. Only for a database in a
 * file: undefined for one in memory, which has no WAL.
 */
export function startBackgroundCheckpoints(
  db: EmbeddedDatabase,
  options: BackgroundCheckpointOptions = {},
): BackgroundCheckpoints | undefined {
  if (db.memory) return undefined;
  const intervalMs = options.intervalMs ?? 20;
  const restartAfterPages = options.restartAfterPages ?? 8_192;
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  db.pragma("wal_autocheckpoint = 0");
  // When the WAL starts over, SQLite cuts the file back to this size, so a burst it grew in stays brief.
  const pageSize = Number(db.pragma("page_size", { simple: true }));
  db.pragma(`journal_size_limit = ${2 * restartAfterPages * pageSize}`);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path: db.name, intervalMs, restartAfterPages },
  });
  // A failed worker must not leave the WAL growing without bound: SQLite takes checkpointing back.
  const handBack = () => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
  };
  worker.unref(); // a host that exits without stopping it loses nothing: SQLite recovers the WAL on open
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  // Whoever waits for the worker keeps the process alive meanwhile: an unreferenced worker would not.
  const ready = new Promise<void>((resolve, reject) => {
    worker.once("message", () => resolve());
    worker.once("error", reject);
    worker.once("exit", () => reject(new Error("the checkpoint worker exited before it was ready")));
  });
  ready.catch(() => undefined); // a failure is handled below; waiting for readiness is optional
  worker.once("error", handBack);
  let waiting = 0;
  const held = <T>(promise: Promise<T>): Promise<T> => {
    if (waiting++ === 0) worker.ref();
    return promise.finally(() => {
      if (--waiting === 0) worker.unref();
    });
  };
  return {
    get ready() {
      return held(ready);
    },
    stop: async () => {
      worker.postMessage("stop");
      await held(exited);
      handBack();
    },
  };
}
