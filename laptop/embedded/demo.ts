import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import type { PartnerFaults } from "../../partner/faults.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { JsonLogger, type LogLine } from "../../src/adapters/logging/json-logger.js";
import {
  durabilityOf,
  type EmbeddedDatabase,
  openDatabase,
  walCommitCount,
} from "../../src/adapters/sqlite/database.js";
import { type Environment, loadPipelineSettings } from "../../src/config/settings.js";
import { type RandomSource, seededRandom } from "../../src/domain/backoff.js";
import type { OrderMessage } from "../../src/domain/order.js";
import {
  isTerminal,
  PROCESS_STATES,
  type ProcessState,
  type StateRecord,
} from "../../src/domain/state-record.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import { checkInvariants, type InvariantReport } from "../simulation/oracles/invariants.js";
import { auditedWrites, enableStateAudit } from "../simulation/oracles/state-audit.js";
import { startBackgroundCheckpoints } from "../sqlite/background-checkpoints.js";
import { closeDatabase } from "../sqlite/write-batch.js";
import { DEMO_ENVIRONMENT, EMBEDDED_SYNCHRONOUS, startEmbeddedStack } from "./embedded-stack.js";
import { localKeys } from "./key-file.js";
import type { LocalPipeline } from "./pipeline.js";

export interface DemoOptions {
  readonly orders: number;
  readonly faults: PartnerFaults;
  readonly duplicateReplies: number;
  readonly seed: number;
  readonly agent: "activity" | "queue";
  /** A directory for the database, or ":memory:"; a fresh temporary directory when absent. */
  readonly data?: string;
  readonly timeoutMs: number;
  readonly env: Environment;
  /** Where log lines go (JSON, one per line); none when absent. */
  readonly log?: (line: LogLine) => void;
  /** Called about once a second with the counts so far. */
  readonly progress?: (counts: Readonly<Record<string, number>>) => void;
}

export interface DemoSummary {
  orders: {
    submitted: number;
    deadLettered: number;
  } & Record<ProcessState, number>;
  partner: { calls: number; effects: number; duplicateEffects: number };
  supervisor: { scans: number; resets: number; toError: number };
  invariants: InvariantReport;
  throughput: { ordersPerSecond: number };
  /**
   * The instants the throughput is measured between (first post, every order settled), so that runs
   * made side by side can be put on one time line.
   */
  window: { from: string; to: string };
  /**
   * CPU time of the whole process (every thread, user and system) over the same seconds, per order,
   * and how many cores it kept busy on average: with the cores of the machine, the most orders a second
   * this build could do if nothing else ran and every core were kept busy.
   */
  cpu: { msPerOrder: number; coresBusy: number; cores: number };
  latencyMs: { p50: number; p99: number };
  /** How long posting the whole batch took, and how many orders were not yet settled when it ended. */
  submission: { seconds: number; unsettledWhenPosted: number };
  storage: StorageFigures;
  /** The process's peak resident set size, its threads included (`process.resourceUsage().maxRSS`). */
  peakRssMb: number;
}

/** The database's side of a run, over the same seconds as `throughput`. */
export interface StorageFigures {
  readonly database: "file" | "memory";
  /** As SQLite reports them for the run's connection: "wal" on a file, "memory" in memory. */
  readonly journalMode: string;
  readonly synchronous: string;
  /**
   * Write transactions committed to the WAL during the run, by every part of the pipeline: the
   * wal-index's change counter (`walCommitCount`). Null in memory, where there is no WAL to count.
   */
  readonly commits: number | null;
  readonly commitsPerSecond: number | null;
  /** Rows inserted, updated or deleted during the run, those written by triggers included (`total_changes()`). */
  readonly rowsWritten: number;
  readonly rowsWrittenPerSecond: number;
  /**
   * For scale, measured once the batch has settled: how many single-row commits a second SQLite makes
   * on a fresh database beside the run's, at the same settings (`singleRowCommitsPerSecond`).
   */
  readonly singleRowCommitsPerSecond: number;
}

/** Runs a finite batch through the whole pipeline against the simulated partner, then checks the invariants. */
export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const clock = new SystemClock();
  const { logger, counts } = scanCountingLogger(options.log);
  loadPipelineSettings({ ...DEMO_ENVIRONMENT, AGENT_MODE: options.agent, ...options.env }); // fail before any I/O
  const temporary = options.data === undefined ? mkdtempSync(join(tmpdir(), "sas-demo-")) : undefined;
  if (options.data !== undefined && options.data !== ":memory:") mkdirSync(options.data, { recursive: true });
  const path =
    options.data === ":memory:" ? ":memory:" : join(options.data ?? temporary ?? ".", "sas.sqlite");
  const db = openDatabase(path, { synchronous: EMBEDDED_SYNCHRONOUS });
  enableStateAudit(db);
  const keyRing = localKeys(options.env, options.data ?? temporary ?? ":memory:", new Date()).ring;
  const stack = await startEmbeddedStack({ ...options, db, logger, keyRing });
  const { pipeline, partner, settings } = stack;
  if (!partner) throw new Error("the demo starts its own simulated partner");
  try {
    const random = seededRandom(options.seed);
    const messages = Array.from({ length: options.orders }, (_, i) =>
      demoOrder(`ord-${options.seed}`, i, random),
    );
    const before = storageCounters(db);
    const cpuBefore = process.cpuUsage();
    const from = new Date();
    const begin = performance.now();
    for (const message of messages) await pipeline.post(message as unknown as JsonValue);
    const posted = performance.now();
    const unsettledWhenPosted = options.orders - settledCount(await pipeline.states.countByState());
    const finishedAt = await waitUntilSettled(pipeline, options, begin + options.timeoutMs, clock);
    const cpuUsed = process.cpuUsage(cpuBefore);
    const to = new Date(from.getTime() + (finishedAt - begin));
    const after = storageCounters(db);
    const elapsedSeconds = (finishedAt - begin) / 1_000;
    const deadLettered = new Map<string, string>();
    const records = new Map<string, StateRecord>();
    await collect(pipeline, records, deadLettered);
    const ledger = await partner.ledger();
    const invariants = checkInvariants({
      submitted: messages.map((m) => m.orderId),
      records,
      deadLettered,
      writes: auditedWrites(db),
      ledger,
      maxRecoveries: settings.recovery.maxRecoveries,
      onExhausted: settings.recovery.onExhausted,
    });
    const latencies = settleLatencies(records);
    const tallied = tally(records, deadLettered.size, options.orders);
    return {
      orders: tallied as DemoSummary["orders"],
      partner: { calls: ledger.calls, effects: ledger.effects, duplicateEffects: ledger.duplicateEffects },
      supervisor: counts,
      invariants,
      throughput: { ordersPerSecond: round(options.orders / elapsedSeconds) },
      window: { from: from.toISOString(), to: to.toISOString() },
      cpu: cpuFigures(cpuUsed, options.orders, elapsedSeconds),
      latencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
      submission: { seconds: round((posted - begin) / 1_000), unsettledWhenPosted },
      storage: {
        ...storageFigures(db, before, after, elapsedSeconds),
        singleRowCommitsPerSecond: await singleRowCommitsPerSecond(
          options.data === ":memory:" ? ":memory:" : (options.data ?? tmpdir()),
        ),
      },
      peakRssMb: round(process.resourceUsage().maxRSS / 1_024),
    };
  } finally {
    await stack.stop();
    closeDatabase(db);
    if (temporary) rmSync(temporary, { recursive: true, force: true });
  }
}

/** A logger that passes each line on to `log` and counts the Supervisor's scans and what they did. */
function scanCountingLogger(log: DemoOptions["log"]): {
  logger: JsonLogger;
  counts: DemoSummary["supervisor"];
} {
  const counts = { scans: 0, resets: 0, toError: 0 };
  const logger = new JsonLogger((line) => {
    if (line.event === "supervisor.scan" && line.skipped === false) {
      counts.scans++;
      counts.resets += Number(line.resets ?? 0);
      counts.toError += Number(line.toError ?? 0) + Number(line.stalled ?? 0);
    }
    log?.(line);
  }, "info");
  return { logger, counts };
}

/** Milliseconds from each settled record's creation to its last change, ascending. */
function settleLatencies(records: ReadonlyMap<string, StateRecord>): number[] {
  return [...records.values()]
    .filter((r) => isTerminal(r.processState))
    .map((r) => Date.parse(r.updatedAt) - Date.parse(r.createdAt))
    .sort((a, b) => a - b);
}

/** Polls until every order is terminal or dead-lettered, or the deadline passes; returns when it stopped. */
async function waitUntilSettled(
  pipeline: LocalPipeline,
  options: DemoOptions,
  deadline: number,
  clock: SystemClock,
): Promise<number> {
  for (;;) {
    const byState = await pipeline.states.countByState();
    const deadLetters = (await pipeline.ordersQueue.deadLetterQueue.peek(10_000)).length;
    options.progress?.({ submitted: options.orders, deadLettered: deadLetters, ...byState });
    const now = performance.now();
    if (deadLetters + settledCount(byState) >= options.orders || now > deadline) return now;
    await clock.sleep(100);
  }
}

function cpuFigures(used: NodeJS.CpuUsage, orders: number, seconds: number): DemoSummary["cpu"] {
  const ms = (used.user + used.system) / 1_000;
  return {
    msPerOrder: Math.round((ms / orders) * 1_000) / 1_000,
    coresBusy: Math.round((ms / 1_000 / seconds) * 100) / 100,
    cores: availableParallelism(),
  };
}

function settledCount(byState: Readonly<Partial<Record<ProcessState, number>>>): number {
  return PROCESS_STATES.filter(isTerminal).reduce((n, state) => n + (byState[state] ?? 0), 0);
}

interface StorageCounters {
  readonly commits: number | null;
  readonly rows: number;
}

function storageCounters(db: EmbeddedDatabase): StorageCounters {
  const rows = Number(db.prepare("SELECT total_changes()").pluck().get());
  return { commits: walCommitCount(db), rows };
}

function storageFigures(
  db: EmbeddedDatabase,
  before: StorageCounters,
  after: StorageCounters,
  seconds: number,
): Omit<StorageFigures, "singleRowCommitsPerSecond"> {
  // The WAL's counter is 32 bits and wraps.
  const commits =
    before.commits === null || after.commits === null ? null : (after.commits - before.commits) >>> 0;
  const rowsWritten = after.rows - before.rows;
  return {
    database: db.memory ? "memory" : "file",
    ...durabilityOf(db),
    commits,
    commitsPerSecond: commits === null ? null : round(commits / seconds),
    rowsWritten,
    rowsWrittenPerSecond: round(rowsWritten / seconds),
  };
}

/**
 * The storage floor: single-row inserts, each its own transaction, into a tiny table of a fresh
 * database in `directory` (or in memory), opened as the embedded host opens its own (WAL,
 * EMBEDDED_SYNCHRONOUS, checkpoints on a worker thread), for at least `minMs`. Commits per second.
 */
export async function singleRowCommitsPerSecond(directory: string, minMs = 300): Promise<number> {
  const dir = directory === ":memory:" ? undefined : mkdtempSync(join(directory, "sas-commit-floor-"));
  const db = openDatabase(dir ? join(dir, "floor.sqlite") : ":memory:", {
    synchronous: EMBEDDED_SYNCHRONOUS,
    migrations: [],
  });
  const checkpoints = startBackgroundCheckpoints(db);
  try {
    await checkpoints?.ready;
    db.exec("CREATE TABLE floor (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO floor (v) VALUES (?)");
    const begin = performance.now();
    let commits = 0;
    let elapsed = 0;
    do {
      for (let i = 0; i < 100; i++) insert.run(`row ${commits++}`);
      elapsed = performance.now() - begin;
    } while (elapsed < minMs);
    return round(commits / (elapsed / 1_000));
  } finally {
    await checkpoints?.stop();
    db.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

async function collect(
  pipeline: LocalPipeline,
  records: Map<string, StateRecord>,
  deadLettered: Map<string, string>,
): Promise<void> {
  for (const message of await pipeline.ordersQueue.deadLetterQueue.peek(10_000)) {
    const body = message.body as { orderId?: unknown } | null;
    const orderId = typeof body?.orderId === "string" ? body.orderId : message.messageId;
    deadLettered.set(orderId, message.deadLetterReason ?? "");
  }
  const rows = pipeline.storedStates.all();
  for (const record of rows) records.set(record.orderId, record);
}

function tally(records: ReadonlyMap<string, StateRecord>, deadLettered: number, submitted: number) {
  const byState = Object.fromEntries(PROCESS_STATES.map((state) => [state, 0])) as Record<
    ProcessState,
    number
  >;
  for (const record of records.values()) byState[record.processState]++;
  return { submitted, deadLettered, ...byState };
}

/** A plausible order message, made from a seeded random source. */
export function demoOrder(prefix: string, index: number, random: RandomSource): OrderMessage {
  const lines = 1 + Math.floor(random() * 3);
  return {
    schemaVersion: 1,
    orderId: `${prefix}-${String(index).padStart(6, "0")}`,
    customerId: `cust-${Math.floor(random() * 500)}`,
    currency: "EUR",
    items: Array.from({ length: lines }, (_, line) => ({
      sku: `SKU-${line + 1}-${Math.floor(random() * 100)}`,
      quantity: 1 + Math.floor(random() * 5),
      unitPriceMinor: 100 + Math.floor(random() * 100_000),
    })),
    replyTo: "status-demo",
  };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
