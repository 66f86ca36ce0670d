import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import type { BreakerView } from "../../src/domain/breaker-view.js";
import { createOrdersApi, type OrdersApiBackend } from "../../src/operator/orders-api.js";
import { createStatsReadings, MESSAGE_COUNT_CAP, type StatsSources } from "../../src/operator/stats.js";
import {
  MAX_DELIVERY_COUNT_EXCEEDED,
  type QueueReceiver,
  type ReceivedMessage,
} from "../../src/ports/message-queue.js";
import type { ScanJournal } from "../../src/ports/scan-journal.js";

const T0 = "2026-01-01T00:00:00.000Z";

/** A dead-letter queue holding `reasons.length` messages, counting its peeks; or failing every peek. */
function deadLetters(reasons: readonly string[], failing = false) {
  const messages = reasons.map(
    (reason, i): ReceivedMessage => ({
      messageId: `m-${i}`,
      body: null,
      correlationId: undefined,
      subject: undefined,
      applicationProperties: {},
      sequenceNumber: 10 + i * 3, // sequence numbers need not be consecutive
      enqueuedTime: new Date(T0),
      deliveryCount: 1,
      lockToken: undefined,
      lockedUntil: undefined,
      deadLetterReason: reason,
      deadLetterErrorDescription: undefined,
    }),
  );
  const receiver = {
    peeks: 0,
    name: "q/$deadletterqueue",
    async peek(maxMessages: number, from = 0): Promise<ReceivedMessage[]> {
      receiver.peeks++;
      if (failing) throw new Error("the broker is unreachable");
      return messages.filter((m) => m.sequenceNumber >= from).slice(0, maxMessages);
    },
  };
  return receiver as typeof receiver & QueueReceiver;
}

const NO_SCAN: ScanJournal = { record: async () => undefined, last: async () => null };

function sources(overrides: Partial<StatsSources> = {}): StatsSources {
  return {
    clock: new VirtualClock(T0),
    states: {
      oldestPending: async () => null,
      countFinishedBetween: async () => 0,
      countFinishedPerMinute: async () => [],
      countByWorkflowVersion: async () => [],
    },
    journal: NO_SCAN,
    deadLetterQueues: {},
    parkedQueue: null,
    defaultWorkflowVersion: 2,
    ...overrides,
  };
}

const broker = (n: number) => Array.from({ length: n }, () => MAX_DELIVERY_COUNT_EXCEEDED);
const refused = (n: number) => Array.from({ length: n }, () => "InvalidOrderMessage");

describe("orders finished over the last hour", () => {
  it("asks the store for the hour up to the reading, included, and places each minute's count in it", async () => {
    // 12:34:56.789: the hour's minutes are 11:35 to 12:34, the last one partial.
    const clock = new VirtualClock("2026-01-01T12:34:56.789Z");
    const asked: string[][] = [];
    const stats = createStatsReadings(
      sources({
        clock,
        states: {
          oldestPending: async () => null,
          countFinishedBetween: async () => 0,
          countByWorkflowVersion: async () => [],
          countFinishedPerMinute: async (from, to) => {
            asked.push([from, to]);
            return [
              { minute: "2026-01-01T11:35", processState: "Processed", count: 4 },
              { minute: "2026-01-01T12:34", processState: "Processed", count: 2 },
              { minute: "2026-01-01T12:00", processState: "CompensationFailed", count: 1 },
            ];
          },
        },
      }),
    );
    const hour = await stats.finishedLastHour();
    expect(asked).toEqual([["2026-01-01T11:35:00.000Z", "2026-01-01T12:34:56.790Z"]]);
    expect(hour.from).toBe("2026-01-01T11:35:00.000Z");
    expect(hour.until).toBe("2026-01-01T12:34:56.789Z");
    expect(Object.keys(hour.byState)).toEqual(["Processed", "Error", "Compensated", "CompensationFailed"]);
    expect(hour.byState.Processed?.length).toBe(60);
    expect([hour.byState.Processed?.[0], hour.byState.Processed?.[59]]).toEqual([4, 2]);
    expect(hour.byState.CompensationFailed?.[25]).toBe(1);
    expect(hour.byState.Error?.every((n) => n === 0)).toBe(true);
    // Read again within five seconds: the same reading, no second query.
    await clock.advance(4_000);
    expect(await stats.finishedLastHour()).toBe(hour);
    expect(asked).toHaveLength(1);
  });
});

describe("message counts", () => {
  it("counts up to the cap per queue, in batches, and says when a count reached it", async () => {
    const full = deadLetters(broker(MESSAGE_COUNT_CAP + 3));
    const few = deadLetters(broker(2));
    const parked = deadLetters(refused(MESSAGE_COUNT_CAP));
    const stats = createStatsReadings(
      sources({ deadLetterQueues: { orders: full, replies: few }, parkedQueue: parked }),
    );
    expect(await stats.messages()).toEqual({
      countedAt: T0,
      countedUpTo: MESSAGE_COUNT_CAP,
      deadLettered: {
        orders: { count: MESSAGE_COUNT_CAP, capped: true },
        replies: { count: 2, capped: false },
      },
      parked: { count: MESSAGE_COUNT_CAP, capped: true },
    });
    expect(full.peeks).toBe(4); // 250 at a time, and no peek past the cap
    expect(few.peeks).toBe(2); // the second finds nothing more
  });

  it("without a parking queue, tells the broker's dead letters from the handlers' by their reason", async () => {
    const orders = deadLetters([...broker(2), ...refused(3), ...broker(1)]);
    const replies = deadLetters(refused(1));
    const stats = createStatsReadings(sources({ deadLetterQueues: { orders, replies } }));
    const counted = await stats.messages();
    expect(counted.deadLettered).toEqual({
      orders: { count: 3, capped: false },
      replies: { count: 0, capped: false },
    });
    expect(counted.parked).toEqual({ count: 4, capped: false });
  });

  it("marks the parked count capped when any dead-letter queue it was counted from reached the cap", async () => {
    const orders = deadLetters([...refused(1), ...broker(MESSAGE_COUNT_CAP)]);
    const stats = createStatsReadings(sources({ deadLetterQueues: { orders } }));
    const counted = await stats.messages();
    expect(counted.deadLettered.orders).toEqual({ count: MESSAGE_COUNT_CAP - 1, capped: true });
    expect(counted.parked).toEqual({ count: 1, capped: true });
  });

  it("reuses a reading for five seconds on the clock, and takes a failed one again at once", async () => {
    const clock = new VirtualClock(T0);
    const orders = deadLetters(broker(1));
    const stats = createStatsReadings(sources({ clock, deadLetterQueues: { orders } }));
    await stats.messages();
    await clock.advance(4_999);
    expect((await stats.messages()).countedAt).toBe(T0);
    expect(orders.peeks).toBe(2);
    await clock.advance(1);
    expect((await stats.messages()).countedAt).toBe("2026-01-01T00:00:05.000Z");

    const down = deadLetters([], true);
    const failing = createStatsReadings(sources({ clock, deadLetterQueues: { orders: down } }));
    await expect(failing.messages()).rejects.toThrow(/unreachable/);
    await expect(failing.messages()).rejects.toThrow(/unreachable/);
    expect(down.peeks).toBe(2);
  });
});

describe("workflow versions", () => {
  it("counts per version what is in flight and what awaits an operator, every version this build runs listed", async () => {
    const stats = createStatsReadings(
      sources({
        defaultWorkflowVersion: 2,
        states: {
          oldestPending: async () => null,
          countFinishedBetween: async () => 0,
          countFinishedPerMinute: async () => [],
          countByWorkflowVersion: async (states) => {
            expect([...states].sort()).toEqual(
              ["Compensating", "CompensationFailed", "Error", "Pending", "Processing"].sort(),
            );
            return [
              { workflowVersion: 2, processState: "Pending", count: 5 },
              { workflowVersion: 2, processState: "Processing", count: 2 },
              { workflowVersion: 2, processState: "CompensationFailed", count: 1 },
              // Written by a newer deployment: shown, so a rollback's leftovers are not hidden.
              { workflowVersion: 7, processState: "Compensating", count: 1 },
            ];
          },
        },
      }),
    );
    expect(await stats.workflowVersions()).toEqual({
      default: 2,
      byVersion: {
        1: { inFlight: 0, awaitingOperator: 0 },
        2: { inFlight: 7, awaitingOperator: 1 },
        3: { inFlight: 0, awaitingOperator: 0 },
        4: { inFlight: 0, awaitingOperator: 0 },
        7: { inFlight: 1, awaitingOperator: 0 },
      },
    });
  });
});

/** A closed breaker that never opened, and an open one. */
const BREAKERS: readonly BreakerView[] = [
  {
    operation: "reserveInventory",
    status: "closed",
    since: null,
    openedAt: null,
    nextProbeAt: null,
    opening: null,
    consecutiveFailures: 1,
    windowCalls: 12,
    windowFailures: 1,
  },
  {
    operation: "chargePayment",
    status: "open",
    since: "2026-01-01T00:00:00.000Z",
    openedAt: "2026-01-01T00:00:00.000Z",
    nextProbeAt: "2026-01-01T00:00:05.000Z",
    opening: { cause: "run", consecutiveFailures: 3, windowCalls: 3, windowFailures: 3, windowMs: 30_000 },
    consecutiveFailures: 0,
    windowCalls: 0,
    windowFailures: 0,
  },
];

describe("GET /api/stats", () => {
  function api(overrides: Partial<StatsSources>, countByState?: () => Promise<never>) {
    const logger = new MemoryLogger();
    const unused = () => Promise.reject(new Error("not used by the stats route"));
    const backend: OrdersApiBackend = {
      post: unused,
      getRecord: unused,
      operator: { resubmit: unused, compensate: unused },
      listRecords: unused,
      countPending: unused,
      maxPending: 10,
      countByState:
        countByState ??
        (async () => ({
          Pending: 0,
          Processing: 0,
          Processed: 0,
          Error: 0,
          Compensating: 0,
          Compensated: 0,
          CompensationFailed: 0,
        })),
      maxInFlight: 10,
      stats: createStatsReadings(sources(overrides)),
    };
    return { api: createOrdersApi({ backend, logger }), logger };
  }

  it("answers with the other figures, the failed ones null and named in `unavailable`, and logs why", async () => {
    const journal: ScanJournal = {
      record: async () => undefined,
      last: () => Promise.reject(new Error("403")),
    };
    const { api: broken, logger } = api({ deadLetterQueues: { orders: deadLetters([], true) }, journal });
    const answer = await broken.stats();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      messages: null,
      lastScan: null,
      unavailable: ["messages", "lastScan"],
      inFlight: { processing: 0, max: 10 },
      throughput: { finishedPerMinute: [0, 0, 0, 0, 0] },
    });
    const logged = logger.events("http.backend-failed").map((line) => line.operation);
    expect(logged.sort()).toEqual(["stats.lastScan", "stats.messages"]);
  });

  it("answers the circuit breakers as the breakers source has them, read at every request", async () => {
    let reads = 0;
    const { api: withBreakers } = api({
      breakers: async () => {
        reads++;
        return BREAKERS;
      },
    });
    const first = await withBreakers.stats();
    expect(first.body).toMatchObject({ breakers: BREAKERS, unavailable: [] });
    await withBreakers.stats();
    expect(reads).toBe(2);
  });

  it("has no breakers field on a host without breakers, and null with the reason logged when they fail", async () => {
    const { api: without } = api({});
    expect(Object.keys((await without.stats()).body as object)).not.toContain("breakers");

    const { api: failing, logger } = api({
      breakers: () => Promise.reject(new Error("the breaker store is unreachable")),
    });
    const answer = await failing.stats();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ breakers: null, unavailable: ["breakers"] });
    expect(logger.events("http.backend-failed").map((line) => line.operation)).toEqual(["stats.breakers"]);
  });

  it("answers 503 when the state store cannot count", async () => {
    const { api: down } = api({}, () => Promise.reject(new Error("cosmos is down")));
    expect(await down.stats()).toEqual({
      status: 503,
      body: { error: "service unavailable", message: "the counts could not be read; try again" },
    });
  });
});
