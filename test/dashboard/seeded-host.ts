/**
 * The embedded host's API over a SQLite store seeded for the dashboard's browser tests: orders finished
 * in known minutes of the last hour, a known backlog, older records up to a count, the scripted lives of
 * order-lives.ts, and breakers taken through known calls, all on a virtual clock standing at NOW. Also a
 * proxy that, like the Functions host, refuses every request without the function key.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import { LocalPipeline } from "../../laptop/embedded/pipeline.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { loadPipelineSettings } from "../../src/config/settings.js";
import { seededRandom } from "../../src/domain/backoff.js";
import type { BreakerOutcome } from "../../src/domain/circuit-breaker.js";
import type { ProcessState, StateRecord } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { pendingRecord } from "../support/records.js";
import type { OrderLife } from "./order-lives.js";

/** The host's clock: half a minute into 12:00, so the hour's chart runs from 11:01 to 12:00 UTC. */
export const NOW = "2026-03-02T12:00:30.000Z";
export const MINUTE = 60_000;
/** Orders finished in the last hour: [minutes before the current one, terminal state, how many]. */
export const FINISHED: readonly (readonly [number, ProcessState, number])[] = [
  [0, "Processed", 7],
  [1, "Processed", 12],
  [1, "Error", 2],
  [5, "Compensated", 3],
  [17, "CompensationFailed", 1],
  [30, "Processed", 20],
  [59, "Processed", 4],
  [59, "Error", 1],
];
/** The backlog, and the older records that fill the store up to the count asked for. */
export const PENDING = 1_234;
export const PROCESSING = 37;
const OLD: readonly (readonly [ProcessState, number])[] = [
  ["Error", 800],
  ["CompensationFailed", 50],
  ["Compensating", 5],
  ["Compensated", 2_000],
];
export const KEY = "function-key-of-the-test";

export const minuteStart = (minutesBefore: number) => {
  const now = Date.parse(NOW);
  return now - (now % MINUTE) - minutesBefore * MINUTE;
};

/** Every record as a row, inserted in one transaction, as the store writes them. */
function insertAll(db: EmbeddedDatabase, records: Iterable<StateRecord>): void {
  const insert = db.prepare(
    `INSERT INTO state_records (order_id, etag, process_state, locked_by, complete_by, not_before, updated_at, progress_at, document)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    let n = 0;
    for (const r of records) {
      insert.run(
        r.orderId,
        `"e${n++}"`,
        r.processState,
        r.lockedBy,
        r.completeBy,
        r.notBefore,
        r.updatedAt,
        r.progressAt,
        JSON.stringify(r),
      );
    }
  })();
}

/** The seeded records: the lives, the hour's finished orders, the backlog, and older ones up to `total`. */
function* seededRecords(lives: readonly OrderLife[], total: number): Generator<StateRecord> {
  for (const life of lives) yield life.record;
  let n = lives.length;
  const record = (processState: ProcessState, updatedAt: string, overrides: Partial<StateRecord> = {}) =>
    pendingRecord(`ord-${String(n++).padStart(6, "0")}`, {
      processState,
      updatedAt,
      createdAt: updatedAt,
      ...overrides,
    });
  for (const [before, state, count] of FINISHED) {
    for (let i = 0; i < count; i++)
      yield record(state, new Date(minuteStart(before) + 1_000 + i * 100).toISOString());
  }
  const old = (i: number) => addMilliseconds(NOW, -2 * 3_600_000 - i * 20_000);
  for (let i = 0; i < PENDING; i++) yield record("Pending", old(i), { notBefore: old(i) });
  for (let i = 0; i < PROCESSING; i++) {
    yield record("Processing", old(i), {
      lockedBy: `ord-p${i}:1`,
      attempt: 1,
      completeBy: addMilliseconds(NOW, 60_000),
    });
  }
  for (const [state, count] of OLD) for (let i = 0; i < count; i++) yield record(state, old(i));
  while (n < total) yield record("Processed", old(n));
}

export interface SeededHost {
  readonly db: EmbeddedDatabase;
  readonly pipeline: LocalPipeline;
  readonly clock: VirtualClock;
  readonly api: HttpApi;
  close(): Promise<void>;
}

/**
 * The host over `total` records (at least the lives and the seeded figures: about 4,200), with
 * reserveInventory's breaker closed after 3 answered calls and 1 failed, chargePayment's open after a
 * run of failed ones (BREAKER_FAILURE_RUN).
 */
export async function openSeededHost(lives: readonly OrderLife[], total: number): Promise<SeededHost> {
  const folder = mkdtempSync(join(tmpdir(), "dashboard-"));
  const db = openDatabase(join(folder, "sas.sqlite"));
  const clock = new VirtualClock(NOW);
  const settings = loadPipelineSettings({});
  const pipeline = await LocalPipeline.open({
    db,
    clock,
    random: seededRandom(1),
    logger: new MemoryLogger("warn"),
    settings,
    partnerUrl: "http://127.0.0.1:9",
    starterIntervalMs: 1_000,
    supervisorIntervalMs: 5_000,
  });
  insertAll(db, seededRecords(lives, total));
  db.exec("ANALYZE");
  const calls = async (operation: string, ...outcomes: BreakerOutcome[]) => {
    for (const outcome of outcomes) {
      const decision = await pipeline.breaker.admit(operation);
      if (decision.decision === "defer") throw new Error(`${operation} deferred`);
      await pipeline.breaker.record(decision.ticket, outcome);
    }
  };
  await calls("reserveInventory", "succeeded", "succeeded", "succeeded", "transient");
  // A run of failures as long as the breaker's policy takes to open on a run.
  await calls("chargePayment", ...new Array<BreakerOutcome>(settings.breaker.failureRun).fill("transient"));
  const api = await startHttpApi({
    port: 0,
    logger: new MemoryLogger("warn"),
    backend: pipeline.apiBackend(),
  });
  return {
    db,
    pipeline,
    clock,
    api,
    close: async () => {
      await api.close();
      await pipeline.stop();
      db.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A proxy that, like the Functions host, refuses every request without the key (query `code` or header). */
export async function keyedProxy(target: string, refused: string[]): Promise<Server> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://proxy");
    if (url.searchParams.get("code") !== KEY && req.headers["x-functions-key"] !== KEY) {
      refused.push(url.pathname);
      res.writeHead(401).end();
      return;
    }
    const forwarded = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}
