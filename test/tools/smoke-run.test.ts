/**
 * `npm run smoke` against real storefronts: one over the embedded pipeline, where every order reaches a
 * final state (also when `--outage` takes the partner down mid-run through the embedded host's operator
 * API), and one whose orders are answered only in part, where the run fails naming the rest.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedStack } from "../../laptop/embedded/embedded-stack.js";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import { localKeys } from "../../laptop/embedded/key-file.js";
import { SqliteMessageQueue } from "../../laptop/sqlite/sqlite-message-queue.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { type OrderStatus, statusMessageFor, statusMessageId } from "../../src/domain/status-message.js";
import type { MessageQueue } from "../../src/ports/message-queue.js";
import { type Storefront, startStorefront } from "../../storefront/storefront.js";
import { runSmoke } from "../../tools/smoke/run-smoke.js";
import { FINAL_STATES } from "../../tools/smoke/store-client.js";

const SMOKE = join(import.meta.dirname, "../../tools/smoke/smoke.ts");
const STATUS_QUEUE = "storefront-status";
/** The embedded host's API token: the partner's controls need it, as the operator commands do. */
const API_TOKEN = "smoke-test-api-token";

/** The smoke command in a child process (not spawnSync: the store under test runs in this process). */
function smoke(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", SMOKE, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  return new Promise((resolve) => child.on("exit", (status) => resolve({ status, stdout, stderr })));
}

function storefrontOn(orders: MessageQueue, statusQueue: MessageQueue, logger: MemoryLogger) {
  return startStorefront({
    orders,
    statusQueue,
    statusQueueName: STATUS_QUEUE,
    orderBookFile: ":memory:",
    port: 0,
    host: "127.0.0.1",
    clock: new SystemClock(),
    logger,
  });
}

describe("npm run smoke against the storefront on the embedded pipeline", () => {
  const db = openDatabase(":memory:");
  const logger = new MemoryLogger("warn");
  let stack: Awaited<ReturnType<typeof startEmbeddedStack>>;
  let storefront: Storefront;
  let api: HttpApi;

  beforeAll(async () => {
    stack = await startEmbeddedStack({
      db,
      logger,
      // Permanent refusals too, so more than one final state is read back.
      faults: { transient: 0.1, permanent: 0.1, slow: 0, lostReply: 0 },
      duplicateReplies: 0,
      seed: 5,
      agent: "activity",
      env: {},
      keyRing: localKeys({}, ":memory:", new Date()).ring,
    });
    storefront = await storefrontOn(
      stack.pipeline.queue("orders"),
      stack.pipeline.queue(STATUS_QUEUE),
      logger,
    );
    api = await startHttpApi({
      port: 0,
      logger,
      backend: stack.pipeline.apiBackend(),
      partner: stack.partnerControls,
      apiToken: API_TOKEN,
    });
  });
  afterAll(async () => {
    await api?.close();
    await storefront?.close();
    await stack?.stop();
    db.close();
  });

  it("places the orders, and reads for each the final state the Scheduler recorded", async () => {
    const report = await runSmoke({
      store: storefront.url,
      orders: 16,
      timeoutMs: 60_000,
      seed: 9,
      concurrency: 4,
      pollIntervalMs: 200,
    });
    expect(report.problem).toBeNull();
    expect(report.placementErrors).toEqual([]);
    expect(report.unfinished).toEqual([]);
    expect(report.ok).toBe(true);
    expect(new Set(report.placed).size).toBe(16);
    expect(Object.keys(report.finals).sort()).toEqual([...report.placed].sort());
    // What the storefront heard on its queue is what the Scheduler's own records say.
    for (const orderId of report.placed) {
      const record = await stack.pipeline.states.get(orderId);
      expect(report.finals[orderId], orderId).toBe(record?.processState);
      expect(FINAL_STATES).toContain(report.finals[orderId]);
    }
    expect(report.seconds).toBeGreaterThan(0);
    expect(report.seconds).toBeLessThan(60);
  }, 90_000);

  it("as a command: exits 0 and prints the count of each final state and the time", async () => {
    const result = await smoke(["--store", storefront.url, "--orders", "5", "--timeout-seconds", "60"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      /placed 5 of 5 orders through http:\/\/127\.0\.0\.1:\d+ in [\d.]+ s \(seed 1\)/,
    );
    const counts =
      /all 5 reached a final state in [\d.]+ s: Processed (\d+), Error (\d+), Compensated (\d+), CompensationFailed (\d+)/.exec(
        result.stdout,
      );
    expect(counts?.slice(1).reduce((sum, n) => sum + Number(n), 0)).toBe(5);
    expect(result.stdout).toMatch(/smoke: passed\n$/);
  }, 90_000);

  it("fails, naming the refusal, when the partner cannot be taken down; the orders are still followed", async () => {
    const lines: string[] = [];
    const report = await runSmoke({
      store: storefront.url,
      orders: 2,
      timeoutMs: 60_000,
      seed: 4,
      concurrency: 1,
      pollIntervalMs: 200,
      outage: { seconds: 5, api: api.url }, // no token
      progress: (line) => lines.push(line),
    });
    expect(report.outage?.down).toBeNull();
    expect(report.outage?.afterPlaced).toBe(1);
    expect(report.outage?.problem).toMatch(
      /^the partner could not be taken down: POST \/api\/partner\/outage: 401 unauthorized: /,
    );
    expect(lines).toEqual([`smoke: ${report.outage?.problem}`]);
    expect(report.unfinished).toEqual([]);
    expect(Object.keys(report.finals)).toHaveLength(2);
    expect(report.ok).toBe(false);
    const status = (await (await fetch(`${api.url}/api/partner`)).json()) as { outage: unknown };
    expect(status.outage).toBeNull();
  }, 90_000);

  it("as a command with --outage 5: the partner goes down mid-run, comes back, and every order finishes", async () => {
    const started = Date.now();
    const result = await smoke([
      ...["--store", storefront.url, "--orders", "20", "--outage", "5", "--timeout-seconds", "120"],
      ...["--api", api.url, "--token", API_TOKEN],
    ]);
    expect(result.stderr).toBe("");
    expect(result.status, result.stdout).toBe(0);
    // The run lasted at least the outage: it waited for the partner to be back.
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000);
    const iso = "\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z";
    // Said when it happened (after 7 of 20 orders, a third rounded up), and again in the report.
    expect(result.stdout).toMatch(
      new RegExp(
        `^smoke: took the partner down for 5 s after 7 of 20 orders were placed \\(since ${iso}, until ${iso}\\)\n`,
      ),
    );
    const outage = new RegExp(
      `smoke: outage: the partner was down for 5 s after 7 of 20 orders were placed \\(since (${iso}), until (${iso})\\), answering again at (${iso}); (\\d+) orders reached a final state after it was due back`,
    ).exec(result.stdout);
    expect(outage, result.stdout).not.toBeNull();
    const [, since, until, back, after] = outage ?? [];
    expect(Date.parse(until ?? "") - Date.parse(since ?? "")).toBe(5_000);
    // Read back up as soon as it was due (the command reads once a second), not once the orders were
    // done, which takes longer: the breakers the outage opened wait before they probe again. The 5 s
    // allow for a loaded machine's late timers and slow answers.
    expect(Date.parse(back ?? "")).toBeGreaterThanOrEqual(Date.parse(until ?? "") - 1_000);
    expect(Date.parse(back ?? "")).toBeLessThan(Date.parse(until ?? "") + 5_000);
    expect(Number(after)).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/all 20 reached a final state in [\d.]+ s: Processed \d+/);
    expect(result.stdout).toMatch(/smoke: passed\n$/);
    // The partner refused calls meanwhile, and journaled both changes.
    expect((await stack.partner?.ledger())?.outageRefusals).toBeGreaterThan(0);
    const status = (await (await fetch(`${api.url}/api/partner`)).json()) as {
      outage: unknown;
      changes: { change: string; by: string; until?: string }[];
    };
    expect(status.outage).toBeNull();
    expect(status.changes.filter((change) => change.by === "operator")).toEqual([
      expect.objectContaining({ change: "outage", until }),
    ]);
  }, 180_000);
});

/**
 * A stand-in for the Scheduler that reads the orders queue and answers only some orders: the first of
 * every three with received, processing, completed; the second with received; the third not at all.
 */
function partialScheduler(orders: MessageQueue, statuses: MessageQueue) {
  const answered = new Map<string, "Processed" | "Pending" | "Submitted">();
  const stop = new AbortController();
  const send = (orderId: string, status: OrderStatus, attempt: number) => {
    const message = statusMessageFor({ orderId, attempt }, status, new Date().toISOString(), null);
    return statuses.send({
      messageId: statusMessageId(message),
      body: { ...message },
      correlationId: orderId,
    });
  };
  const loop = (async () => {
    while (!stop.signal.aborted) {
      for (const message of await orders.receive(10)) {
        const orderId = String((message.body as { orderId: string }).orderId);
        const turn = answered.size % 3;
        if (turn === 0) {
          await send(orderId, "received", 0);
          await send(orderId, "processing", 1);
          await send(orderId, "completed", 1);
        } else if (turn === 1) await send(orderId, "received", 0);
        answered.set(orderId, turn === 0 ? "Processed" : turn === 1 ? "Pending" : "Submitted");
        await orders.complete(message);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    answered,
    stop: async () => {
      stop.abort();
      await loop;
    },
  };
}

describe("npm run smoke against a storefront whose orders do not all finish", () => {
  const db = openDatabase(":memory:");
  const clock = new SystemClock();
  const orders = new SqliteMessageQueue(db, clock, "orders");
  const statuses = new SqliteMessageQueue(db, clock, STATUS_QUEUE);
  const scheduler = partialScheduler(orders, statuses);
  let storefront: Storefront;

  beforeAll(async () => {
    storefront = await storefrontOn(orders, statuses, new MemoryLogger("warn"));
  });
  afterAll(async () => {
    await storefront?.close();
    await scheduler.stop();
    db.close();
  });

  it("fails when the time is up, naming each order without a final state and its last state", async () => {
    const report = await runSmoke({
      store: storefront.url,
      orders: 6,
      timeoutMs: 3_000,
      seed: 2,
      concurrency: 2,
      pollIntervalMs: 100,
    });
    expect(report.ok).toBe(false);
    expect(report.placed).toHaveLength(6);
    const expected = [...scheduler.answered].filter(([id]) => report.placed.includes(id));
    expect(expected).toHaveLength(6);
    expect(report.finals).toEqual(Object.fromEntries(expected.filter(([, state]) => state === "Processed")));
    expect(Object.fromEntries(report.unfinished.map((order) => [order.orderId, order.state]))).toEqual(
      Object.fromEntries(expected.filter(([, state]) => state !== "Processed")),
    );
    expect(report.seconds).toBeGreaterThanOrEqual(2.9);
    expect(report.seconds).toBeLessThan(10);
  }, 30_000);

  it("as a command: exits 1 within its timeout, naming the orders", async () => {
    const before = new Set(scheduler.answered.keys());
    const started = Date.now();
    const result = await smoke(["--store", storefront.url, "--orders", "3", "--timeout-seconds", "2"]);
    expect(result.status).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    const placed = [...scheduler.answered].filter(([id]) => !before.has(id));
    expect(placed).toHaveLength(3);
    expect(result.stdout).toMatch(/smoke: \d of 3 reached a final state within [\d.]+ s: Processed \d/);
    for (const [orderId, state] of placed) {
      if (state === "Processed") expect(result.stdout).not.toContain(orderId);
      else expect(result.stdout).toContain(`  ${orderId} ${state}\n`);
    }
    expect(result.stdout).toMatch(/smoke: FAILED\n$/);
  }, 30_000);
});
