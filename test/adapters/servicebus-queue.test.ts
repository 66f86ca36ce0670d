import { setTimeout } from "node:timers/promises";
import { ServiceBusClient } from "@azure/service-bus";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { ServiceBusStandIn } from "../../laptop/stand-ins/servicebus-broker/index.js";
import { ServiceBusMessageQueue } from "../../src/adapters/servicebus/service-bus-queue.js";
import { createStatsReadings } from "../../src/operator/stats.js";
import { MessageLockLostError, type QueueOptions } from "../../src/ports/message-queue.js";
import { describeMessageQueueContract } from "../contracts/message-queue.contract.js";

const QUEUE = "orders";
/** Short enough that a broker bug fails the test instead of hanging on the SDK's 60 s defaults. */
const CLIENT_OPTIONS = { retryOptions: { maxRetries: 0, timeoutInMs: 5_000 } };
const RECEIVE_WAIT_MS = 100;

interface Harness {
  readonly clock: VirtualClock;
  connect(): ServiceBusClient;
  /** Opens the queue through `client`, by default a client (connection) of its own. */
  open(options?: Partial<QueueOptions>, client?: ServiceBusClient): ServiceBusMessageQueue;
  dispose(): Promise<void>;
}

/** A broker with one queue on the virtual clock, and adapters on it; dispose closes them all. */
async function startHarness(options: Partial<QueueOptions>): Promise<Harness> {
  const clock = new VirtualClock();
  const broker = await ServiceBusStandIn.start({ clock });
  broker.createQueue(QUEUE, options);
  const clients: ServiceBusClient[] = [];
  const queues: ServiceBusMessageQueue[] = [];
  const connect = () => {
    const client = new ServiceBusClient(broker.connectionString, CLIENT_OPTIONS);
    clients.push(client);
    return client;
  };
  return {
    clock,
    connect,
    open: (queueOptions = options, client = connect()) => {
      const queue = new ServiceBusMessageQueue(client, QUEUE, queueOptions, {
        clock,
        receiveWaitMs: RECEIVE_WAIT_MS,
      });
      queues.push(queue);
      return queue;
    },
    dispose: async () => {
      for (const queue of queues) await queue.close();
      for (const client of clients) await client.close();
      await broker.close();
    },
  };
}

describeMessageQueueContract("ServiceBusMessageQueue (test broker)", async (options) => {
  const harness = await startHarness(options);
  return {
    queue: harness.open(),
    clock: harness.clock,
    openSecondReceiver: async () => harness.open(),
    dispose: harness.dispose,
  };
});

describe("ServiceBusMessageQueue", () => {
  let harness: Harness;
  const options: QueueOptions = {
    lockDurationMs: 1_000,
    maxDeliveryCount: 3,
    duplicateDetectionWindowMs: 5_000,
  };

  beforeEach(async () => {
    harness = await startHarness(options);
  });
  afterEach(async () => {
    await harness.dispose();
  });

  it("reports the options it was given, merged with the defaults", () => {
    const queue = harness.open({ maxDeliveryCount: 4 });
    expect(queue.options).toEqual({
      lockDurationMs: 60_000,
      maxDeliveryCount: 4,
      duplicateDetectionWindowMs: 600_000,
    });
    expect(queue.name).toBe(QUEUE);
  });

  it("maps a lost lock reported by the broker to MessageLockLostError, keeping the SDK's error as cause", async () => {
    const queue = harness.open();
    await queue.send({ messageId: "m", body: null });
    const [received] = await queue.receive(1);
    if (!received) throw new Error("no message");
    await harness.clock.advance(options.lockDurationMs);

    const error = await queue.complete(received).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MessageLockLostError);
    expect(error).toMatchObject({ queue: QUEUE, messageId: "m", cause: { code: "MessageLockLost" } });
  });

  it("leaves a lock to expire unless renewLock is called (the SDK would renew it for minutes)", async () => {
    const queue = harness.open();
    await queue.send({ messageId: "m", body: null });
    await queue.receive(1);
    await harness.clock.advance(options.lockDurationMs / 2);
    await setTimeout(100);
    await harness.clock.advance(options.lockDurationMs / 2);
    expect(await queue.receive(1)).toMatchObject([{ messageId: "m", deliveryCount: 2 }]);
  });

  it("queues concurrent receives, which one SDK receiver cannot run at once", async () => {
    const queue = harness.open();
    await queue.send([
      { messageId: "a", body: 1 },
      { messageId: "b", body: 2 },
    ]);
    const [first, second] = await Promise.all([queue.receive(1), queue.receive(1)]);
    expect([...(first ?? []), ...(second ?? [])].map((m) => m.messageId)).toEqual(["a", "b"]);
  });

  it("refuses to settle a peeked message or one another queue received, as a lost lock", async () => {
    const queue = harness.open();
    await queue.send({ messageId: "m", body: 1 });
    const [peeked] = await queue.peek(1);
    if (!peeked) throw new Error("no message");
    await expect(queue.complete(peeked)).rejects.toBeInstanceOf(MessageLockLostError);

    const [received] = await queue.receive(1);
    if (!received) throw new Error("no message");
    await expect(queue.deadLetterQueue.complete(received)).rejects.toBeInstanceOf(MessageLockLostError);
    await queue.complete(received);
  });

  it("refuses to dead-letter from the dead-letter queue", async () => {
    const queue = harness.open();
    await queue.send({ messageId: "m", body: 1 });
    const [received] = await queue.receive(1);
    if (!received) throw new Error("no message");
    await queue.deadLetter(received, { reason: "r", description: "d" });
    const [dead] = await queue.deadLetterQueue.receive(1);
    if (!dead) throw new Error("no dead-lettered message");
    await expect(queue.deadLetterQueue.deadLetter(dead, { reason: "r", description: "d" })).rejects.toThrow(
      /dead-letter queue/,
    );
    await queue.deadLetterQueue.complete(dead);
  });

  it("counts as duplicates only the ids it sent itself: another sender's duplicate is dropped silently", async () => {
    const first = harness.open();
    const second = harness.open();
    expect(await first.send({ messageId: "same", body: "first" })).toEqual({ accepted: 1, duplicates: 0 });
    expect(await second.send({ messageId: "same", body: "second" })).toEqual({ accepted: 1, duplicates: 0 });
    expect((await first.receive(10)).map((m) => m.body)).toEqual(["first"]);
  });

  it("sends more messages than fit one batch as several batches", async () => {
    const queue = harness.open();
    const body = "x".repeat(50_000);
    const messages = Array.from({ length: 12 }, (_, i) => ({ messageId: `m-${i}`, body }));
    expect(await queue.send(messages)).toEqual({ accepted: 12, duplicates: 0 });
    const peeked = await queue.peek(20);
    expect(peeked.map((m) => m.messageId)).toEqual(messages.map((m) => m.messageId));
  });

  it("gives the statistics every dead-lettered message, peeked past one batch from the dead-letter queue", async () => {
    const queue = harness.open();
    const messages = Array.from({ length: 260 }, (_, i) => ({ messageId: `m-${i}`, body: i }));
    await queue.send(messages);
    for (;;) {
      const received = await queue.receive(100);
      if (received.length === 0) break;
      for (const message of received) await queue.deadLetter(message, { reason: "Poison", description: "" });
    }
    const stats = createStatsReadings({
      clock: harness.clock,
      states: {
        oldestPending: async () => null,
        countFinishedBetween: async () => 0,
        countFinishedPerMinute: async () => [],
        countByWorkflowVersion: async () => [],
      },
      journal: { record: async () => undefined, last: async () => null },
      deadLetterQueues: { [QUEUE]: queue.deadLetterQueue },
      parkedQueue: queue,
      defaultWorkflowVersion: 2,
    });
    const counted = await stats.messages();
    expect(counted.deadLettered).toEqual({ [QUEUE]: { count: 260, capped: false } });
    expect(counted.parked).toEqual({ count: 0, capped: false });
  });

  it("rejects invalid message ids and counts before sending anything", async () => {
    const queue = harness.open();
    await expect(queue.send({ messageId: "", body: 1 })).rejects.toThrow(/messageId/);
    await expect(queue.send({ messageId: "x".repeat(129), body: 1 })).rejects.toThrow(/messageId/);
    await expect(queue.receive(0)).rejects.toThrow(/maxMessages/);
    await expect(queue.peek(1.5)).rejects.toThrow(/maxMessages/);
    expect(await queue.send([])).toEqual({ accepted: 0, duplicates: 0 });
    expect(await queue.peek(10)).toEqual([]);
  });

  it("close closes its sender and receivers, leaving the client usable", async () => {
    const client = harness.connect();
    const queue = harness.open(options, client);
    await queue.send({ messageId: "m", body: 1 });
    await queue.close();
    await expect(queue.send({ messageId: "n", body: 2 })).rejects.toThrow(/closed/);
    await expect(queue.receive(1)).rejects.toThrow(/closed/);
    await expect(queue.deadLetterQueue.peek(1)).rejects.toThrow(/closed/);

    const again = harness.open(options, client);
    expect((await again.receive(10)).map((m) => m.messageId)).toEqual(["m"]);
  });
});
