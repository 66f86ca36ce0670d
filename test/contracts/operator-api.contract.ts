import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import type { StateRecord } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import type { OperatorCommand } from "../../src/operator/operator-commands.js";
import type { MessageQueue } from "../../src/ports/message-queue.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { updateAsRead } from "../../src/state/record-updates.js";
import { pendingRecord, T0 } from "../support/records.js";

export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** One host of the orders API, with the store behind it to seed and inspect. */
export interface OperatorApiHost {
  readonly states: StateStore;
  /** The host's clock, at T0 when the host opens. */
  readonly clock: VirtualClock;
  /** A queue as the host's consumers and statistics use it. */
  queue(name: string): MessageQueue;
  /** The queues whose dead-letter queues the host's statistics count. */
  readonly deadLetterQueues: readonly string[];
  /** The holder the host's Supervisor names in its lease. */
  readonly supervisorHolder: string;
  /** Delivers `body` on the orders queue to the host's submission, as its trigger or consumer does. */
  submitMessage(body: unknown): Promise<void>;
  /** Runs the host's Supervisor once, as its timer does. */
  runSupervisor(): Promise<void>;
  /** `POST /api/orders/{encodedId}/{command}` with `body` as the request body. */
  command(command: OperatorCommand, encodedId: string, body: string): Promise<Answer>;
  /** `GET /api/orders?{query}`. */
  list(query: string): Promise<Answer>;
  /** `GET /api/stats`; the host's MAX_IN_FLIGHT is 200. */
  stats(): Promise<Answer>;
  /** `GET /api/orders/{encodedId}/history`. */
  history(encodedId: string): Promise<Answer>;
  close(): Promise<void>;
}

/** An order parked in `Error` after its recoveries ran out, its first step applied. */
function erroredRecord(orderId: string): StateRecord {
  const base = pendingRecord(orderId);
  return {
    ...base,
    processState: "Error",
    failureCount: 4,
    attempt: 4,
    steps: base.steps.map((step, i) =>
      i === 0 ? { ...step, status: "Completed", attempt: 1, reference: "res-1", updatedAt: T0 } : step,
    ),
    compensationLog: [
      {
        sequence: 1,
        step: "reserveInventory",
        idempotencyKey: `${orderId}:reserveInventory`,
        reference: "res-1",
        recordedAt: T0,
      },
    ],
    lastError: { kind: "timeout", code: "RecoveriesExhausted", message: "4 failures", step: null, at: T0 },
  };
}

const zeros = (n: number): number[] => new Array<number>(n).fill(0);
const who = (reason = "customer called") => JSON.stringify({ operator: "alice", reason });

/** Sends a message and abandons each delivery until the queue's broker dead-letters it. */
async function deliverUntilDeadLettered(queue: MessageQueue, messageId: string): Promise<void> {
  await queue.send({ messageId, body: { poison: true } });
  for (let delivery = 1; ; delivery++) {
    const [message] = await queue.receive(1);
    if (!message) break;
    if (delivery > queue.options.maxDeliveryCount) throw new Error(`${messageId} was never dead-lettered`);
    await queue.abandon(message);
  }
  const [dead] = await queue.deadLetterQueue.peek(10);
  expect(dead).toMatchObject({ messageId, deadLetterReason: "MaxDeliveryCountExceeded" });
}

/**
 * The operator's routes, `GET /api/orders` and `POST /api/orders/{orderId}/resubmit` and `/compensate`,
 * as every host must answer them: the same routes, codes and bodies whether the embedded host or the
 * Functions app serves them.
 */
export function operatorApiContract(open: () => Promise<OperatorApiHost>): void {
  let host: OperatorApiHost;
  beforeEach(async () => {
    host = await open();
  });
  afterEach(async () => {
    await host.close();
  });

  describe("operator commands over HTTP", () => {
    it("resubmits an Error order: 202, the record Pending, who and why recorded", async () => {
      await host.states.createIfAbsent(erroredRecord("ord-err"));
      const answer = await host.command("resubmit", "ord-err", who("partner fixed"));
      expect(answer).toEqual({
        status: 202,
        body: {
          orderId: "ord-err",
          command: "resubmit",
          processState: "Pending",
          statusUrl: "/api/orders/ord-err",
        },
      });
      const record = await host.states.get("ord-err");
      expect(record).toMatchObject({ processState: "Pending", failureCount: 0 });
      expect(record?.lastError).toMatchObject({
        kind: "operator",
        message: "resubmit by alice: partner fixed",
      });
    });

    it("compensates an Error order: 202, the record Compensating and unlocked for the starter", async () => {
      await host.states.createIfAbsent(erroredRecord("ord-undo"));
      const answer = await host.command("compensate", "ord-undo", who());
      expect(answer).toMatchObject({ status: 202, body: { processState: "Compensating" } });
      expect(await host.states.get("ord-undo")).toMatchObject({
        processState: "Compensating",
        lockedBy: null,
      });
    });

    it("answers 409 with the transition table's reason where the command does not apply", async () => {
      await host.states.createIfAbsent({ ...pendingRecord("ord-done"), processState: "Processed" });
      const answer = await host.command("resubmit", "ord-done", who());
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({
        error: "command refused",
        command: "resubmit",
        orderId: "ord-done",
      });
      expect(String(answer.body.message)).toContain("may not resubmit order ord-done in Processed");
      const nothing = await host.command("compensate", "ord-done", who());
      expect(nothing.status).toBe(409);
      expect((await host.states.get("ord-done"))?.processState).toBe("Processed");
    });

    it("answers 404 for an unknown order", async () => {
      expect(await host.command("compensate", "ord-nobody", who())).toEqual({
        status: 404,
        body: { error: "order not found", orderId: "ord-nobody" },
      });
    });

    it("answers 400 naming each field of a bad body, and changes nothing", async () => {
      await host.states.createIfAbsent(erroredRecord("ord-bad"));
      const missing = await host.command("resubmit", "ord-bad", JSON.stringify({ operator: "alice" }));
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({
        error: "invalid operator command",
        issues: [expect.objectContaining({ field: "reason" })],
      });
      const extra = await host.command(
        "resubmit",
        "ord-bad",
        JSON.stringify({ operator: "a", reason: "b", x: 1 }),
      );
      expect(extra.status).toBe(400);
      expect((await host.command("resubmit", "ord-bad", "not json")).status).toBe(400);
      expect((await host.command("resubmit", "ord-bad", who(" ".repeat(3)))).status).toBe(400);
      expect((await host.command("resubmit", "x".repeat(65), who())).status).toBe(400);
      expect((await host.states.get("ord-bad"))?.processState).toBe("Error");
    });

    it("lists the orders of one state newest change first, page by page, then acts on one of them", async () => {
      for (let i = 0; i < 5; i++) {
        const record = erroredRecord(`ord-e${i}`);
        await host.states.createIfAbsent({ ...record, updatedAt: `2026-01-0${i + 1}T00:00:00.000Z` });
      }
      await host.states.createIfAbsent({ ...pendingRecord("ord-p"), updatedAt: "2026-02-01T00:00:00.000Z" });
      const ids: string[] = [];
      let continuation: string | null = null;
      let pages = 0;
      do {
        const query: string = `state=Error&limit=2${continuation ? `&continuation=${encodeURIComponent(continuation)}` : ""}`;
        const page = await host.list(query);
        expect(page.status).toBe(200);
        const items = page.body.items as { orderId: string; processState: string; _etag?: string }[];
        expect(items.every((item) => item.processState === "Error" && item._etag === undefined)).toBe(true);
        ids.push(...items.map((item) => item.orderId));
        continuation = page.body.continuation as string | null;
        pages++;
      } while (continuation);
      expect(ids).toEqual(["ord-e4", "ord-e3", "ord-e2", "ord-e1", "ord-e0"]);
      expect(pages).toBe(3);
      expect(((await host.list("")).body.items as unknown[]).length).toBe(6);
      await host.command("resubmit", "ord-e4", who());
      expect(((await host.list("state=Error")).body.items as unknown[]).length).toBe(4);
    });

    it("counts the orders in each state, and the attempts in flight against MAX_IN_FLIGHT", async () => {
      await host.states.createIfAbsent(erroredRecord("ord-s1"));
      await host.states.createIfAbsent(pendingRecord("ord-s2"));
      await host.states.createIfAbsent({ ...pendingRecord("ord-s3"), processState: "Processed" });
      const none = { count: 0, capped: false };
      const answer = await host.stats();
      // A host with circuit breakers lists one per partner operation, all closed before any call.
      const { breakers, ...body } = answer.body as Record<string, unknown>;
      if (breakers !== undefined) {
        expect(breakers).toHaveLength(8);
        for (const view of breakers as Record<string, unknown>[]) {
          expect(view).toMatchObject({
            status: "closed",
            openedAt: null,
            nextProbeAt: null,
            consecutiveFailures: 0,
          });
        }
      }
      expect({ status: answer.status, body }).toEqual({
        status: 200,
        body: {
          counts: {
            Pending: 1,
            Processing: 0,
            Processed: 1,
            Error: 1,
            Compensating: 0,
            Compensated: 0,
            CompensationFailed: 0,
          },
          inFlight: { processing: 0, max: 200 },
          // The Pending and the Error order may still run version 4's code; the Processed one may not.
          workflowVersions: {
            default: 4,
            byVersion: {
              1: { inFlight: 0, awaitingOperator: 0 },
              2: { inFlight: 0, awaitingOperator: 0 },
              3: { inFlight: 0, awaitingOperator: 0 },
              4: { inFlight: 1, awaitingOperator: 1 },
            },
          },
          oldestPending: { orderId: "ord-s2", since: T0, ageMs: 0 },
          messages: {
            countedAt: T0,
            countedUpTo: 1_000,
            deadLettered: Object.fromEntries(host.deadLetterQueues.map((queue) => [queue, none])),
            parked: none,
          },
          lastScan: null,
          // ord-s1 (Error) and ord-s3 (Processed) changed last at this very instant: the last minute has them.
          throughput: {
            windowMinutes: 5,
            until: T0,
            finishedPerMinute: [0, 0, 0, 0, 2],
            perSecondLastMinute: 0.03,
          },
          // The same two, in the current minute (the last of the hour) of their terminal states.
          finishedLastHour: {
            from: "2025-12-31T23:01:00.000Z",
            until: T0,
            byState: {
              Processed: [...zeros(59), 1],
              Error: [...zeros(59), 1],
              Compensated: zeros(60),
              CompensationFailed: zeros(60),
            },
          },
          unavailable: [],
        },
      });
    });

    it("F24-4: reports the Pending order waiting longest since its progress, not its last change, its age growing with the clock", async () => {
      const at = (ms: number) => addMilliseconds(T0, ms);
      expect((await host.stats()).body.oldestPending).toBeNull();
      await host.states.createIfAbsent(
        pendingRecord("ord-young", { progressAt: at(-10_000), updatedAt: at(-95_000) }),
      );
      // Deferred a moment ago, with no progress for 90 s.
      await host.states.createIfAbsent(
        pendingRecord("ord-old", { progressAt: at(-90_000), updatedAt: at(-1_000) }),
      );
      await host.states.createIfAbsent({ ...erroredRecord("ord-older"), progressAt: at(-900_000) });
      expect((await host.stats()).body.oldestPending).toEqual({
        orderId: "ord-old",
        since: at(-90_000),
        ageMs: 90_000,
      });
      await host.clock.advance(30_000);
      expect((await host.stats()).body.oldestPending).toMatchObject({ orderId: "ord-old", ageMs: 120_000 });
      // Claimed by the starter: it no longer waits, and the next oldest does.
      const old = await host.states.get("ord-old");
      if (!old) throw new Error("ord-old is missing");
      await updateAsRead(host.states, old, "starter", {
        type: "claim",
        now: at(30_000),
        attemptTimeoutMs: 60_000,
      });
      expect((await host.stats()).body.oldestPending).toEqual({
        orderId: "ord-young",
        since: at(-10_000),
        ageMs: 40_000,
      });
    });

    it("counts dead-lettered messages per queue and parked ones, from a reading a few seconds old at most", async () => {
      await deliverUntilDeadLettered(host.queue("orders"), "m-poison-1");
      const first = (await host.stats()).body.messages as Record<string, Record<string, unknown>>;
      expect(first.deadLettered).toMatchObject({
        orders: { count: 1, capped: false },
        "agent-requests": { count: 0, capped: false },
      });
      expect(first.parked).toEqual({ count: 0, capped: false });
      expect(first.countedAt).toBe(T0);

      await deliverUntilDeadLettered(host.queue("agent-requests"), "m-poison-2");
      await host.clock.advance(1_000);
      expect((await host.stats()).body.messages).toEqual(first); // reused: peeking every queue costs
      await host.clock.advance(4_000);
      const second = (await host.stats()).body.messages as Record<string, Record<string, unknown>>;
      expect(second.countedAt).toBe(addMilliseconds(T0, 5_000));
      expect(second.deadLettered).toMatchObject({
        orders: { count: 1, capped: false },
        "agent-requests": { count: 1, capped: false },
      });

      await host.submitMessage({ schemaVersion: 1, orderId: "ord-bad" });
      await host.clock.advance(5_000);
      const third = (await host.stats()).body.messages as Record<string, Record<string, unknown>>;
      expect(third.parked).toEqual({ count: 1, capped: false });
      expect(third.deadLettered).toMatchObject({ orders: { count: 1, capped: false } });
    });

    it("shows the Supervisor's last scan: who ran it, when, what it found and what it cost", async () => {
      expect((await host.stats()).body.lastScan).toBeNull();
      for (const orderId of ["ord-x1", "ord-x2"]) {
        const created = await host.states.createIfAbsent(pendingRecord(orderId));
        if (!created.created) throw new Error(`${orderId} was seeded twice`);
        await updateAsRead(host.states, created.record, "starter", {
          type: "claim",
          now: T0,
          attemptTimeoutMs: 1_000,
        });
      }
      await host.clock.advance(120_000);
      await host.runSupervisor();
      const scanAt = addMilliseconds(T0, 120_000);
      expect((await host.stats()).body.lastScan).toEqual({
        holder: host.supervisorHolder,
        startedAt: scanAt,
        finishedAt: scanAt,
        found: {
          scanned: 2,
          resets: 2,
          toError: 0,
          toCompensation: 0,
          stalled: 0,
          lostRaces: 0,
          truncated: false,
          leaseLost: false,
        },
        cost: { requestUnits: 0, durationMs: expect.any(Number), pages: 1 },
      });
    });

    it("counts the orders finished in each of the last five minutes by their last change, oldest first", async () => {
      const finished = (orderId: string, processState: StateRecord["processState"], ms: number) =>
        host.states.createIfAbsent({
          ...pendingRecord(orderId),
          processState,
          updatedAt: addMilliseconds(T0, ms),
        });
      await finished("ord-now-30s", "Processed", -30_000);
      await finished("ord-now-45s", "Processed", -45_000);
      await finished("ord-now-61s", "Error", -61_000);
      await finished("ord-now-299s", "Compensated", -299_000);
      await finished("ord-now-300s", "CompensationFailed", -300_000); // five minutes ago: just outside
      await finished("ord-now-301s", "Processed", -301_000);
      await finished("ord-waiting", "Pending", -20_000); // changed, not finished
      await finished("ord-running", "Processing", -20_000);
      expect((await host.stats()).body.throughput).toEqual({
        windowMinutes: 5,
        until: T0,
        finishedPerMinute: [1, 0, 0, 1, 2],
        perSecondLastMinute: 0.03,
      });
      await host.clock.advance(60_000);
      await finished("ord-later", "Processed", 50_000);
      expect((await host.stats()).body.throughput).toEqual({
        windowMinutes: 5,
        until: addMilliseconds(T0, 60_000),
        finishedPerMinute: [0, 0, 1, 2, 1],
        perSecondLastMinute: 0.02,
      });
    });

    it("shows a record's history, the operator's command included, and 404 for an unknown order", async () => {
      await host.states.createIfAbsent(erroredRecord("ord-h"));
      await host.command("compensate", "ord-h", who("customer cancelled"));
      const answer = await host.history("ord-h");
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        orderId: "ord-h",
        entries: [
          {
            actor: "operator",
            command: "compensate",
            from: "Error",
            to: "Compensating",
            attempt: 4,
            step: null,
            code: "CompensationRequested",
          },
        ],
        earlier: null,
      });
      expect((await host.history("ord-none")).status).toBe(404);
      expect((await host.history("x".repeat(65))).status).toBe(400);
    });

    it("answers 400 naming a bad list parameter", async () => {
      for (const [query, field] of [
        ["state=Lost", "state"],
        ["limit=0", "limit"],
        ["limit=201", "limit"],
        ["limit=ten", "limit"],
        ["colour=blue", "colour"],
        ["continuation=nonsense", "continuation"],
      ]) {
        const answer = await host.list(query as string);
        expect(answer.status, query).toBe(400);
        expect(answer.body).toMatchObject({ error: "invalid list request", issues: [{ field }] });
      }
      await host.states.createIfAbsent(erroredRecord("ord-t1"));
      await host.states.createIfAbsent(erroredRecord("ord-t2"));
      const errors = await host.list("state=Error&limit=1");
      const foreign = await host.list(
        `state=Pending&continuation=${encodeURIComponent(String(errors.body.continuation))}`,
      );
      expect(foreign.status).toBe(400);
    });

    it("lets exactly one of two racing commands win; the other is refused", async () => {
      await host.states.createIfAbsent(erroredRecord("ord-race"));
      const answers = await Promise.all([
        host.command("resubmit", "ord-race", who()),
        host.command("compensate", "ord-race", who()),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
      const winner = answers.find((a) => a.status === 202);
      expect((await host.states.get("ord-race"))?.processState).toBe(winner?.body.processState);
    });
  });
}
