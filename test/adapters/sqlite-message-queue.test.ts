import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteMessageQueue } from "../../laptop/sqlite/sqlite-message-queue.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import {
  DEFAULT_QUEUE_OPTIONS,
  MessageLockLostError,
  type QueueOptions,
} from "../../src/ports/message-queue.js";
import { describeMessageQueueContract } from "../contracts/message-queue.contract.js";

describeMessageQueueContract("SqliteMessageQueue (:memory:)", async (options) => {
  const db = openDatabase(":memory:");
  const clock = new VirtualClock();
  return {
    queue: new SqliteMessageQueue(db, clock, "orders", options),
    clock,
    dispose: async () => {
      db.close();
    },
  };
});

describeMessageQueueContract("SqliteMessageQueue (file, one connection per receiver)", async (options) => {
  const dir = mkdtempSync(join(tmpdir(), "sqlite-message-queue-"));
  const path = join(dir, "queue.db");
  const clock = new VirtualClock();
  const connections: EmbeddedDatabase[] = [];
  const open = (): SqliteMessageQueue => {
    const db = openDatabase(path, { synchronous: "NORMAL" });
    connections.push(db);
    return new SqliteMessageQueue(db, clock, "orders", options);
  };
  return {
    queue: open(),
    clock,
    openSecondReceiver: async () => open(),
    dispose: async () => {
      for (const db of connections) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe("SqliteMessageQueue", () => {
  let db: EmbeddedDatabase;
  let clock: VirtualClock;
  const options: QueueOptions = {
    lockDurationMs: 1_000,
    maxDeliveryCount: 3,
    duplicateDetectionWindowMs: 5_000,
  };

  beforeEach(() => {
    db = openDatabase(":memory:");
    clock = new VirtualClock();
  });
  afterEach(() => db.close());

  it("merges the options with the defaults", () => {
    const queue = new SqliteMessageQueue(db, clock, "q", { maxDeliveryCount: 4 });
    expect(queue.options).toEqual({ ...DEFAULT_QUEUE_OPTIONS, maxDeliveryCount: 4 });
  });

  it.each([
    ["lockDurationMs", 0],
    ["maxDeliveryCount", -1],
    ["duplicateDetectionWindowMs", 1.5],
    ["lockDurationMs", Number.NaN],
  ] as const)("rejects %s = %s with a RangeError naming the option", (option, value) => {
    expect(() => new SqliteMessageQueue(db, clock, "q", { [option]: value })).toThrow(
      expect.objectContaining({ name: "RangeError", message: expect.stringContaining(option) }),
    );
  });

  it("rejects an empty or over-long message id, and sends nothing of that batch", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    await expect(queue.send({ messageId: "", body: 1 })).rejects.toThrow(RangeError);
    await expect(
      queue.send([
        { messageId: "ok", body: 1 },
        { messageId: "x".repeat(129), body: 2 },
      ]),
    ).rejects.toThrow(/messageId/);
    expect(await queue.peek(10)).toEqual([]);
    expect(await queue.send({ messageId: "x".repeat(128), body: 3 })).toEqual({ accepted: 1, duplicates: 0 });
  });

  it("rejects maxMessages that is not a positive integer", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    await expect(queue.receive(0)).rejects.toThrow(/maxMessages/);
    await expect(queue.peek(2.5)).rejects.toThrow(/maxMessages/);
  });

  it("names the delivery count in the description of an auto-dead-lettered message", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    await queue.send({ messageId: "m", body: null });
    for (let i = 0; i < options.maxDeliveryCount; i++) {
      const [received] = await queue.receive(1);
      if (received) await queue.abandon(received);
    }
    const [dead] = await queue.deadLetterQueue.peek(1);
    expect(dead?.deadLetterErrorDescription).toBe("Message could not be consumed after 3 delivery attempts.");
  });

  it("fills a receive with later messages when the first candidates are dead-lettered on the way", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    await queue.send([
      { messageId: "spent-1", body: 1 },
      { messageId: "spent-2", body: 2 },
    ]);
    // Each lock runs out unsettled, so both reach maxDeliveryCount without being dead-lettered yet.
    for (let i = 0; i < options.maxDeliveryCount; i++) {
      expect(await queue.receive(2)).toHaveLength(2);
      await clock.advance(options.lockDurationMs);
    }
    await queue.send([
      { messageId: "fresh-1", body: 3 },
      { messageId: "fresh-2", body: 4 },
      { messageId: "fresh-3", body: 5 },
    ]);

    const received = await queue.receive(2);
    expect(received.map((m) => [m.messageId, m.deliveryCount])).toEqual([
      ["fresh-1", 1],
      ["fresh-2", 1],
    ]);
    expect((await queue.deadLetterQueue.peek(10)).map((m) => m.messageId)).toEqual(["spent-1", "spent-2"]);
    expect((await queue.receive(10)).map((m) => m.messageId)).toEqual(["fresh-3"]);
  });

  it("hands out the lock it stored: the token settles, lockedUntil is the stored expiry", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    await queue.send({ messageId: "m", body: null });
    const [received] = await queue.receive(1);
    if (!received) throw new Error("no message");
    expect(received.lockedUntil).toEqual(new Date(clock.now().getTime() + options.lockDurationMs));
    await clock.advance(options.lockDurationMs - 1);
    const renewedUntil = await queue.renewLock(received);
    expect(renewedUntil).toEqual(new Date(clock.now().getTime() + options.lockDurationMs));
    await clock.advance(options.lockDurationMs - 1);
    await queue.complete(received);
    expect(await queue.peek(10)).toEqual([]);
  });

  it("refuses to dead-letter from the dead-letter queue, and to settle a peeked message", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    await queue.send({ messageId: "m", body: null });
    const [received] = await queue.receive(1);
    if (!received) throw new Error("no message");
    await queue.deadLetter(received, { reason: "r", description: "d" });
    const [dead] = await queue.deadLetterQueue.receive(1);
    if (!dead) throw new Error("no dead-lettered message");

    const again = queue.deadLetterQueue.deadLetter(dead, { reason: "r", description: "d" });
    await expect(again).rejects.toThrow(/dead-letter queue/);
    const [peeked] = await queue.deadLetterQueue.peek(1);
    if (!peeked) throw new Error("no peeked message");
    await expect(queue.deadLetterQueue.complete(peeked)).rejects.toThrow(/peeked/);
    await queue.deadLetterQueue.complete(dead);
  });

  it("keeps queues that share a database apart, duplicate detection included", async () => {
    const a = new SqliteMessageQueue(db, clock, "a", options);
    const b = new SqliteMessageQueue(db, clock, "b", options);
    expect(await a.send({ messageId: "same", body: "a" })).toEqual({ accepted: 1, duplicates: 0 });
    expect(await b.send({ messageId: "same", body: "b" })).toEqual({ accepted: 1, duplicates: 0 });

    const [fromA] = await a.receive(10);
    expect(fromA?.body).toBe("a");
    if (!fromA) throw new Error("no message");
    await expect(b.complete(fromA)).rejects.toBeInstanceOf(MessageLockLostError);
    expect((await b.receive(10)).map((m) => m.body)).toEqual(["b"]);
  });

  it("treats a lock as lost at exactly lockedUntil", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    await queue.send({ messageId: "m", body: null });
    const [received] = await queue.receive(1);
    if (!received) throw new Error("no message");
    await clock.advance(options.lockDurationMs);
    await expect(queue.complete(received)).rejects.toBeInstanceOf(MessageLockLostError);
    expect((await queue.receive(1)).map((m) => m.deliveryCount)).toEqual([2]);
  });

  it("accepts an id whose window has passed before pruning removed it", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    const window = options.duplicateDetectionWindowMs;
    await queue.send({ messageId: "first", body: 0 });
    await clock.advance(window / 2);
    await queue.send({ messageId: "id", body: 1 });
    await clock.advance(window / 2 + 1);
    await queue.send({ messageId: "other", body: 2 });
    await clock.advance(window / 2);
    expect(await queue.send({ messageId: "id", body: 3 })).toEqual({ accepted: 1, duplicates: 0 });
  });

  it("forgets message ids once they leave the duplicate-detection window", async () => {
    const queue = new SqliteMessageQueue(db, clock, "q", options);
    const countIds = () =>
      (db.prepare("SELECT COUNT(*) AS n FROM queue_message_ids WHERE queue = 'q'").get() as { n: number }).n;
    await queue.send([
      { messageId: "1", body: 1 },
      { messageId: "2", body: 2 },
    ]);
    await clock.advance(options.duplicateDetectionWindowMs + 1);
    await queue.send({ messageId: "3", body: 3 });
    expect(countIds()).toBe(1);
  });
});
