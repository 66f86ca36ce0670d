import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueConsumer, type QueueConsumerOptions } from "../../laptop/embedded/queue-consumer.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteMessageQueue } from "../../laptop/sqlite/sqlite-message-queue.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import {
  COMPLETE,
  type InboundMessage,
  type MessageDisposition,
  type MessageHandler,
} from "../../src/ports/message-handler.js";
import {
  MAX_DELIVERY_COUNT_EXCEEDED,
  MessageLockLostError,
  type MessageQueue,
  type QueueOptions,
} from "../../src/ports/message-queue.js";

const OPTIONS: QueueOptions = {
  lockDurationMs: 1_000,
  maxDeliveryCount: 3,
  duplicateDetectionWindowMs: 60_000,
};
const POLL_MS = 250;

interface Gate {
  readonly opened: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Lets every callback queued so far run, a few event-loop turns deep; no timers involved. */
async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** The queue with some of its methods replaced, to count or break them. */
function withOverrides(queue: MessageQueue, overrides: Partial<MessageQueue>): MessageQueue {
  return {
    name: queue.name,
    options: queue.options,
    deadLetterQueue: queue.deadLetterQueue,
    send: (messages) => queue.send(messages),
    receive: (max) => queue.receive(max),
    complete: (message) => queue.complete(message),
    abandon: (message) => queue.abandon(message),
    deadLetter: (message, details) => queue.deadLetter(message, details),
    renewLock: (message) => queue.renewLock(message),
    peek: (max, from) => queue.peek(max, from),
    ...overrides,
  };
}

// Every case runs in milliseconds on the virtual clock; a consumer that never goes idle fails fast.
describe("QueueConsumer", { timeout: 5_000 }, () => {
  let db: EmbeddedDatabase;
  let clock: VirtualClock;
  let logger: MemoryLogger;
  let queue: SqliteMessageQueue;
  const consumers: QueueConsumer[] = [];

  beforeEach(() => {
    db = openDatabase(":memory:");
    clock = new VirtualClock();
    logger = new MemoryLogger();
    queue = new SqliteMessageQueue(db, clock, "orders", OPTIONS);
  });

  afterEach(async () => {
    for (const consumer of consumers.splice(0)) await consumer.stop();
    db.close();
  });

  function startConsumer(
    handler: MessageHandler,
    options: Partial<Omit<QueueConsumerOptions, "handler">> = {},
  ): QueueConsumer {
    const consumer = new QueueConsumer({
      queue,
      clock,
      logger,
      pollIntervalMs: POLL_MS,
      ...options,
      handler,
    });
    consumers.push(consumer);
    consumer.start();
    return consumer;
  }

  async function send(...ids: string[]): Promise<void> {
    await queue.send(ids.map((messageId) => ({ messageId, body: { id: messageId } })));
  }

  it("hands the message to the handler and completes it when the handler says so", async () => {
    await queue.send({
      messageId: "m-1",
      body: { orderId: "ord-1" },
      correlationId: "corr-1",
      applicationProperties: { kind: "order", version: 1 },
    });
    const seen: InboundMessage[] = [];
    const consumer = startConsumer(async (message) => {
      seen.push(message);
      return COMPLETE;
    });
    await consumer.idle();

    expect(seen).toEqual([
      {
        messageId: "m-1",
        body: { orderId: "ord-1" },
        deliveryCount: 1,
        enqueuedTime: clock.now(),
        correlationId: "corr-1",
        applicationProperties: { kind: "order", version: 1 },
      },
    ]);
    expect(await queue.peek(10)).toEqual([]);
    expect(await queue.deadLetterQueue.peek(10)).toEqual([]);
    expect(logger.events("queue.message.completed")).toEqual([
      expect.objectContaining({ queue: "orders", messageId: "m-1", deliveryCount: 1 }),
    ]);
  });

  it("dead-letters with the handler's reason and description", async () => {
    await send("m-1");
    const consumer = startConsumer(async () => ({
      action: "deadLetter",
      reason: "InvalidOrder",
      description: "currency must be three capital letters",
    }));
    await consumer.idle();

    expect(await queue.peek(10)).toEqual([]);
    const dead = await queue.deadLetterQueue.peek(10);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      messageId: "m-1",
      deadLetterReason: "InvalidOrder",
      deadLetterErrorDescription: "currency must be three capital letters",
    });
    expect(logger.events("queue.message.deadLettered")).toEqual([
      expect.objectContaining({
        queue: "orders",
        messageId: "m-1",
        deliveryCount: 1,
        reason: "InvalidOrder",
      }),
    ]);
  });

  it("abandons when the handler throws, so the queue redelivers and dead-letters past maxDeliveryCount", async () => {
    await send("m-1");
    const deliveries: number[] = [];
    const consumer = startConsumer(async (message) => {
      deliveries.push(message.deliveryCount);
      throw new Error(`partner down (delivery ${message.deliveryCount})`);
    });
    await consumer.idle();

    expect(deliveries).toEqual([1, 2, 3]);
    expect(await queue.peek(10)).toEqual([]);
    const dead = await queue.deadLetterQueue.peek(10);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ messageId: "m-1", deadLetterReason: MAX_DELIVERY_COUNT_EXCEEDED });
    expect(logger.events("queue.message.abandoned")).toEqual(
      [1, 2, 3].map((deliveryCount) =>
        expect.objectContaining({
          queue: "orders",
          messageId: "m-1",
          deliveryCount,
          error: `partner down (delivery ${deliveryCount})`,
        }),
      ),
    );
  });

  it("abandons on a synchronous throw, a non-Error rejection or a missing disposition", async () => {
    await queue.send({ messageId: "m-1", body: null });
    const handler = ((message: InboundMessage) => {
      if (message.deliveryCount === 1) throw new Error("thrown synchronously");
      if (message.deliveryCount === 2) return Promise.reject("a bare string");
      return Promise.resolve(undefined as unknown as MessageDisposition);
    }) as MessageHandler;
    const consumer = startConsumer(handler);
    await consumer.idle();

    expect(logger.events("queue.message.abandoned").map((line) => line.error)).toEqual([
      "thrown synchronously",
      "a bare string",
      "handler returned an unknown disposition: undefined",
    ]);
    expect(await queue.deadLetterQueue.peek(10)).toHaveLength(1);
  });

  it("never runs more than maxConcurrentCalls handlers at once, and handles every message", async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `m-${i}`);
    await send(...ids);
    const gates: Gate[] = [];
    const handled: string[] = [];
    let running = 0;
    let mostRunning = 0;
    const consumer = startConsumer(
      async (message) => {
        running++;
        mostRunning = Math.max(mostRunning, running);
        const g = gate();
        gates.push(g);
        await g.opened;
        running--;
        handled.push(message.messageId);
        return COMPLETE;
      },
      { maxConcurrentCalls: 3 },
    );

    await settle();
    expect(running).toBe(3);
    for (let released = 0; released < ids.length; released++) {
      gates[released]?.open();
      await settle();
      expect(running).toBeLessThanOrEqual(3);
    }
    await consumer.idle();

    expect(mostRunning).toBe(3);
    expect(handled.sort()).toEqual([...ids].sort());
    expect(await queue.peek(10)).toEqual([]);
  });

  it("renews the lock while a handler runs past the lock duration, so the message is not redelivered", async () => {
    await send("m-1");
    const release = gate();
    const deliveries: number[] = [];
    const consumer = startConsumer(async (message) => {
      deliveries.push(message.deliveryCount);
      await release.opened;
      return COMPLETE;
    });
    await settle();

    // Five lock durations, with polls every POLL_MS that would pick the message up again were it unlocked.
    await clock.advance(5 * OPTIONS.lockDurationMs);
    release.open();
    await consumer.idle();

    expect(deliveries).toEqual([1]);
    expect(await queue.peek(10)).toEqual([]);
    expect(logger.events("queue.message.completed")).toHaveLength(1);
    expect(logger.events("queue.lock.lost")).toEqual([]);
    expect(logger.events("queue.lock.renewed").length).toBeGreaterThanOrEqual(9);
  });

  it("renews no lock once its handler has returned, and keeps one sleep per alarm however many messages", async () => {
    let renewals = 0;
    const counted = withOverrides(queue, {
      renewLock: (message) => {
        renewals++;
        return queue.renewLock(message);
      },
    });
    const consumer = startConsumer(async () => COMPLETE, { queue: counted });
    for (let i = 0; i < 20; i++) {
      await send(`m-${i}`);
      consumer.nudge();
      await consumer.idle();
    }
    // The poll's sleep and the renewals' sleep, not one per message or per nudge.
    expect(clock.pendingSleeps).toBeLessThanOrEqual(2);
    await clock.advance(5 * OPTIONS.lockDurationMs);
    expect(renewals).toBe(0);
    expect(logger.events("queue.message.completed")).toHaveLength(20);
  });

  it("renews each lock on its own schedule, half a lock duration after it began and after each renewal", async () => {
    const renewedAt: [string, number][] = [];
    const t0 = clock.now().getTime();
    const counted = withOverrides(queue, {
      renewLock: (message) => {
        renewedAt.push([message.messageId, clock.now().getTime() - t0]);
        return queue.renewLock(message);
      },
    });
    const releases = new Map<string, Gate>([
      ["m-1", gate()],
      ["m-2", gate()],
    ]);
    const consumer = startConsumer(
      async (message) => {
        await releases.get(message.messageId)?.opened;
        return COMPLETE;
      },
      { queue: counted },
    );
    await send("m-1");
    consumer.nudge();
    await settle();
    await clock.advance(300);
    await send("m-2");
    consumer.nudge();
    await settle();
    await clock.advance(900);
    releases.get("m-1")?.open();
    await settle();
    await clock.advance(1_000);
    releases.get("m-2")?.open();
    await consumer.idle();

    expect(renewedAt).toEqual([
      ["m-1", 500],
      ["m-2", 800],
      ["m-1", 1_000],
      ["m-2", 1_300],
      ["m-2", 1_800],
    ]);
  });

  it("stops renewing a lock it lost, and goes on renewing after a renewal that failed otherwise", async () => {
    const attempts: string[] = [];
    const failing = withOverrides(queue, {
      renewLock: async (message) => {
        attempts.push(`${message.messageId}#${message.deliveryCount}`);
        if (message.messageId === "m-lost") throw new MessageLockLostError(queue.name, message.messageId);
        // The lock is extended, yet the call reports a failure, as a timeout after the write would.
        await queue.renewLock(message);
        throw new Error("database busy");
      },
    });
    const release = gate();
    const consumer = startConsumer(
      async () => {
        await release.opened;
        return COMPLETE;
      },
      { queue: failing },
    );
    await send("m-lost", "m-busy");
    consumer.nudge();
    await settle();
    await clock.advance(3 * (OPTIONS.lockDurationMs / 2));
    release.open();
    await consumer.idle();

    expect(attempts.filter((id) => id === "m-lost#1")).toEqual(["m-lost#1"]);
    expect(attempts.filter((id) => id === "m-busy#1")).toHaveLength(3);
    expect(logger.events("queue.lock.lost")).toContainEqual(
      expect.objectContaining({ messageId: "m-lost", deliveryCount: 1, operation: "renewLock" }),
    );
    expect(logger.events("queue.lock.renewFailed")).toHaveLength(3);
  });

  it("logs a lost lock and goes on when settling fails with MessageLockLostError", async () => {
    await send("m-1");
    const first = gate();
    const deliveries: number[] = [];
    const consumer = startConsumer(
      async (message) => {
        deliveries.push(message.deliveryCount);
        if (message.deliveryCount === 1) await first.opened;
        return COMPLETE;
      },
      // Without renewal the lock runs out while the first handler still runs.
      { queue: withOverrides(queue, { renewLock: async () => clock.now() }) },
    );
    await settle();
    await clock.advance(OPTIONS.lockDurationMs + POLL_MS);
    expect(deliveries).toEqual([1, 2]);

    first.open();
    await consumer.idle();

    expect(logger.events("queue.lock.lost")).toEqual([
      expect.objectContaining({ queue: "orders", messageId: "m-1", deliveryCount: 1, operation: "complete" }),
    ]);
    expect(logger.events("queue.message.completed")).toEqual([
      expect.objectContaining({ messageId: "m-1", deliveryCount: 2 }),
    ]);
    expect(await queue.peek(10)).toEqual([]);
  });

  it("waits on the clock when the queue is empty, and a nudge wakes it at once", async () => {
    let receives = 0;
    const counted = withOverrides(queue, {
      receive: (max) => {
        receives++;
        return queue.receive(max);
      },
    });
    const handled: string[] = [];
    const consumer = startConsumer(
      async (message) => {
        handled.push(message.messageId);
        return COMPLETE;
      },
      { queue: counted },
    );
    await consumer.idle();
    await settle();
    expect(receives).toBe(1);
    expect(clock.pendingSleeps).toBe(1);

    await send("m-1");
    await settle();
    await clock.advance(POLL_MS - 1);
    expect(handled).toEqual([]);
    await clock.advance(1);
    expect(handled).toEqual(["m-1"]);
    await consumer.idle();

    const polls = receives;
    await send("m-2");
    consumer.nudge();
    await consumer.idle();
    expect(handled).toEqual(["m-1", "m-2"]);
    expect(receives).toBeGreaterThan(polls);
    expect(await queue.peek(10)).toEqual([]);
  });

  it("stop() waits for the handlers in flight to finish and settle, and receives nothing more", async () => {
    await send("m-1");
    const release = gate();
    const handled: string[] = [];
    const consumer = startConsumer(async (message) => {
      await release.opened;
      handled.push(message.messageId);
      return COMPLETE;
    });
    await settle();

    let stopped = false;
    const stopping = consumer.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);

    release.open();
    await stopping;
    expect(handled).toEqual(["m-1"]);
    expect(logger.events("queue.message.completed")).toHaveLength(1);
    expect(await queue.peek(10)).toEqual([]);

    await send("m-2");
    consumer.nudge();
    await clock.advance(10 * POLL_MS);
    expect(handled).toEqual(["m-1"]);
    expect(clock.pendingSleeps).toBe(0);
  });
});
