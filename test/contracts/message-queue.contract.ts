import { afterEach, describe, expect, it, type TestContext } from "vitest";
import type { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import {
  MAX_DELIVERY_COUNT_EXCEEDED,
  MessageLockLostError,
  type MessageQueue,
  type OutgoingMessage,
  type QueueOptions,
  type QueueReceiver,
  type ReceivedMessage,
} from "../../src/ports/message-queue.js";

export interface MessageQueueFixture {
  /** A new, empty queue created with the options given to the fixture factory. */
  readonly queue: MessageQueue;
  /**
   * The clock the queue judges locks, windows and schedules by. Without one (a real broker), the
   * cases under "driven by the virtual clock" are skipped.
   */
  readonly clock?: VirtualClock;
  /** Opens another receiver (its own connection) on the same queue; `dispose` closes it too. */
  readonly openSecondReceiver?: () => Promise<MessageQueue>;
  dispose(): Promise<void>;
}

const LOCK_MS = 30_000;
const MAX_DELIVERIES = 3;
const WINDOW_MS = 60_000;
const OPTIONS: QueueOptions = {
  lockDurationMs: LOCK_MS,
  maxDeliveryCount: MAX_DELIVERIES,
  duplicateDetectionWindowMs: WINDOW_MS,
};

/**
 * The MessageQueue port's contract (Service Bus semantics), written against the port only so that
 * every adapter runs the same cases.
 */
export function describeMessageQueueContract(
  adapterName: string,
  createFixture: (options: Partial<QueueOptions>) => Promise<MessageQueueFixture>,
): void {
  describe(`MessageQueue contract: ${adapterName}`, () => {
    let fixture: MessageQueueFixture | undefined;

    afterEach(async () => {
      await fixture?.dispose();
      fixture = undefined;
    });

    async function setup(): Promise<MessageQueueFixture> {
      fixture = await createFixture(OPTIONS);
      return fixture;
    }

    async function setupWithClock(ctx: TestContext): Promise<{ queue: MessageQueue; clock: VirtualClock }> {
      const { queue, clock } = await setup();
      if (!clock) ctx.skip("the fixture cannot drive this queue's time");
      return { queue, clock };
    }

    it("delivers a sent message with its properties, locked, and complete removes it", async () => {
      const { queue } = await setup();
      await queue.send({
        messageId: "m-1",
        body: { orderId: "o-1", lines: [1, 2], note: null },
        correlationId: "c-1",
        subject: "OrderSubmitted",
        applicationProperties: { attempt: 2, urgent: true, source: "test" },
      });
      await queue.send({ messageId: "m-2", body: "plain" });

      const [first, second] = await queue.receive(10);
      expect(first).toMatchObject({
        messageId: "m-1",
        body: { orderId: "o-1", lines: [1, 2], note: null },
        correlationId: "c-1",
        subject: "OrderSubmitted",
        applicationProperties: { attempt: 2, urgent: true, source: "test" },
        deliveryCount: 1,
        deadLetterReason: undefined,
        deadLetterErrorDescription: undefined,
      });
      expect(first?.lockToken).toEqual(expect.any(String));
      expect(first?.lockedUntil).toBeInstanceOf(Date);
      expect(first?.enqueuedTime).toBeInstanceOf(Date);
      expect(second).toMatchObject({
        messageId: "m-2",
        body: "plain",
        correlationId: undefined,
        subject: undefined,
        applicationProperties: {},
      });
      expect(second?.lockToken).not.toEqual(first?.lockToken);

      await queue.complete(required(first));
      await queue.complete(required(second));
      expect(await queue.peek(10)).toEqual([]);
      expect(await queue.receive(10)).toEqual([]);
    });

    it("drops a second send of one message id inside the duplicate-detection window", async () => {
      const { queue } = await setup();
      expect(await queue.send(message("dup", { body: "first" }))).toEqual({ accepted: 1, duplicates: 0 });
      expect(await queue.send(message("dup", { body: "second" }))).toEqual({ accepted: 0, duplicates: 1 });
      const received = await queue.receive(10);
      expect(received.map((m) => m.body)).toEqual(["first"]);
    });

    it("drops a duplicate id inside one batch", async () => {
      const { queue } = await setup();
      const result = await queue.send([
        message("a"),
        message("dup", { body: 1 }),
        message("dup", { body: 2 }),
      ]);
      expect(result).toEqual({ accepted: 2, duplicates: 1 });
      const received = await queue.receive(10);
      expect(received.map((m) => [m.messageId, m.body])).toEqual([
        ["a", "a"],
        ["dup", 1],
      ]);
    });

    it("receives in sequence order and honours maxMessages", async () => {
      const { queue } = await setup();
      await queue.send(message("a"));
      await queue.send([message("b"), message("c")]);
      await queue.send(message("d"));
      await queue.send(message("e"));

      const firstTwo = await queue.receive(2);
      expect(ids(firstTwo)).toEqual(["a", "b"]);
      const rest = await queue.receive(10);
      expect(ids(rest)).toEqual(["c", "d", "e"]);
      const sequence = [...firstTwo, ...rest].map((m) => m.sequenceNumber);
      expect(sequence).toEqual([...sequence].sort((x, y) => x - y));
      expect(new Set(sequence).size).toBe(5);
    });

    it("does not deliver a locked message to a second receive", async () => {
      const { queue } = await setup();
      await queue.send([message("a"), message("b")]);
      expect(ids(await queue.receive(1))).toEqual(["a"]);
      expect(ids(await queue.receive(10))).toEqual(["b"]);
      expect(await queue.receive(10)).toEqual([]);
    });

    it("fails to settle a message twice", async () => {
      const { queue } = await setup();
      await queue.send(message("a"));
      const [a] = await queue.receive(1);
      await queue.complete(required(a));
      await expectLockLost(queue.complete(required(a)));
      await expectLockLost(queue.abandon(required(a)));
      await expectLockLost(queue.renewLock(required(a)));
    });

    it("abandon makes the message available at once with deliveryCount + 1", async () => {
      const { queue } = await setup();
      await queue.send(message("a"));
      const [first] = await queue.receive(1);
      await queue.abandon(required(first));

      const [again] = await queue.receive(1);
      expect(again).toMatchObject({ messageId: "a", deliveryCount: 2 });
      expect(again?.lockToken).not.toEqual(first?.lockToken);
      await expectLockLost(queue.complete(required(first)));
      await queue.complete(required(again));
      expect(await queue.peek(10)).toEqual([]);
    });

    it("settles each message as asked when a completion and an abandonment are issued together", async () => {
      const { queue } = await setup();
      await queue.send([message("a"), message("b"), message("c")]);
      const [a, b, c] = await queue.receive(3);
      await Promise.all([
        queue.complete(required(a)),
        queue.abandon(required(b)),
        queue.deadLetter(required(c), { reason: "Invalid", description: "why" }),
      ]);
      const left = await queue.receive(10);
      expect(left.map((m) => [m.messageId, m.deliveryCount])).toEqual([["b", 2]]);
      expect((await queue.deadLetterQueue.peek(10)).map((m) => m.messageId)).toEqual(["c"]);
    });

    it("dead-letters a message abandoned maxDeliveryCount times", async () => {
      const { queue } = await setup();
      await queue.send(message("poison", { correlationId: "c-9" }));
      for (let delivery = 1; delivery <= MAX_DELIVERIES; delivery++) {
        const [received] = await queue.receive(1);
        expect(received).toMatchObject({ messageId: "poison", deliveryCount: delivery });
        await queue.abandon(required(received));
      }

      expect(await queue.receive(10)).toEqual([]);
      expect(await queue.peek(10)).toEqual([]);
      const [dead] = await queue.deadLetterQueue.peek(10);
      expect(dead).toMatchObject({
        messageId: "poison",
        body: "poison",
        correlationId: "c-9",
        deadLetterReason: MAX_DELIVERY_COUNT_EXCEEDED,
      });
      expect(dead?.deadLetterErrorDescription).toMatch(/\S/);
    });

    it("deadLetter moves the message, with its reason and description, to the dead-letter queue", async () => {
      const { queue } = await setup();
      expect(queue.deadLetterQueue.name).toBe(`${queue.name}/$deadletterqueue`);
      await queue.send(
        message("bad", { correlationId: "c-1", subject: "s", applicationProperties: { kind: "order" } }),
      );
      const [received] = await queue.receive(1);
      await queue.deadLetter(required(received), { reason: "InvalidOrder", description: "no lines" });

      expect(await queue.receive(10)).toEqual([]);
      expect(await queue.peek(10)).toEqual([]);
      const [dead] = await queue.deadLetterQueue.receive(10);
      expect(dead).toMatchObject({
        messageId: "bad",
        body: "bad",
        correlationId: "c-1",
        subject: "s",
        applicationProperties: { kind: "order" },
        enqueuedTime: received?.enqueuedTime,
        deadLetterReason: "InvalidOrder",
        deadLetterErrorDescription: "no lines",
      });
      expect(dead?.lockToken).toEqual(expect.any(String));
      expect(await queue.deadLetterQueue.receive(10)).toEqual([]);

      await queue.deadLetterQueue.complete(required(dead));
      expect(await queue.deadLetterQueue.peek(10)).toEqual([]);
      expect(await queue.deadLetterQueue.receive(10)).toEqual([]);
    });

    it("never dead-letters a message again from the dead-letter queue", async () => {
      const { queue } = await setup();
      await queue.send(message("a"));
      const [received] = await queue.receive(1);
      await queue.deadLetter(required(received), { reason: "Test", description: "to the DLQ" });

      const dlq: QueueReceiver = queue.deadLetterQueue;
      for (let round = 0; round < MAX_DELIVERIES + 2; round++) {
        const [dead] = await dlq.receive(1);
        expect(dead?.messageId).toBe("a");
        await dlq.abandon(required(dead));
      }
      expect(ids(await dlq.peek(10))).toEqual(["a"]);
    });

    it("peek neither locks nor counts a delivery, and shows locked messages", async () => {
      const { queue } = await setup();
      await queue.send([message("a"), message("b"), message("c")]);

      const peeked = await queue.peek(10);
      expect(ids(peeked)).toEqual(["a", "b", "c"]);
      for (const m of peeked) expect(m).toMatchObject({ lockToken: undefined, lockedUntil: undefined });
      expect(ids(await queue.peek(10))).toEqual(["a", "b", "c"]);

      const received = await queue.receive(10);
      expect(received.map((m) => m.deliveryCount)).toEqual([1, 1, 1]);

      const peekedWhileLocked = await queue.peek(10);
      expect(ids(peekedWhileLocked)).toEqual(["a", "b", "c"]);
      expect(peekedWhileLocked.map((m) => m.deliveryCount)).toEqual([1, 1, 1]);
      for (const m of peekedWhileLocked) expect(m.lockToken).toBeUndefined();
      expect(await queue.receive(10)).toEqual([]);
    });

    it("peek honours maxMessages and fromSequenceNumber", async () => {
      const { queue } = await setup();
      await queue.send([message("a"), message("b"), message("c"), message("d")]);
      const all = await queue.peek(10);
      expect(ids(await queue.peek(2))).toEqual(["a", "b"]);
      expect(ids(await queue.peek(2, required(all[1]).sequenceNumber))).toEqual(["b", "c"]);
      expect(ids(await queue.peek(10, required(all[3]).sequenceNumber))).toEqual(["d"]);
    });

    it("never gives one message to two receivers while it is locked", async (ctx) => {
      const { queue, openSecondReceiver } = await setup();
      if (!openSecondReceiver) return ctx.skip("the fixture cannot open a second receiver");
      const second = await openSecondReceiver();
      await queue.send(Array.from({ length: 50 }, (_, i) => message(`m-${i}`)));

      const fromFirst: ReceivedMessage[] = [];
      const fromSecond: ReceivedMessage[] = [];
      for (let round = 0; round < 20; round++) {
        const [a, b] = await Promise.all([queue.receive(7), second.receive(7)]);
        if (a.length + b.length === 0) break;
        fromFirst.push(...a);
        fromSecond.push(...b);
      }

      const all = [...fromFirst, ...fromSecond];
      expect(all).toHaveLength(50);
      expect(new Set(ids(all)).size).toBe(50);
      expect(fromFirst.length).toBeGreaterThan(0);
      expect(fromSecond.length).toBeGreaterThan(0);

      for (const m of fromFirst) await queue.complete(m);
      for (const m of fromSecond) await second.complete(m);
      expect(await second.peek(10)).toEqual([]);
      expect(await queue.peek(10)).toEqual([]);
    });

    describe("driven by the virtual clock", () => {
      it("locks a received message for lockDurationMs", async (ctx) => {
        const { queue, clock } = await setupWithClock(ctx);
        await queue.send(message("a"));
        await clock.advance(1_234);
        const [received] = await queue.receive(1);
        expect(received?.lockedUntil).toEqual(new Date(clock.now().getTime() + LOCK_MS));
      });

      it("accepts a message id again once the duplicate-detection window has passed", async (ctx) => {
        const { queue, clock } = await setupWithClock(ctx);
        await queue.send(message("id", { body: 1 }));
        const [first] = await queue.receive(1);
        await queue.complete(required(first));

        await clock.advance(WINDOW_MS - 1);
        expect(await queue.send(message("id", { body: 2 }))).toEqual({ accepted: 0, duplicates: 1 });
        await clock.advance(2);
        expect(await queue.send(message("id", { body: 3 }))).toEqual({ accepted: 1, duplicates: 0 });
        const received = await queue.receive(10);
        expect(received.map((m) => m.body)).toEqual([3]);
      });

      it("redelivers after the lock expires, and the old lock token can no longer settle", async (ctx) => {
        const { queue, clock } = await setupWithClock(ctx);
        await queue.send(message("a"));
        const [first] = await queue.receive(1);
        await clock.advance(LOCK_MS + 1);

        const [again] = await queue.receive(1);
        expect(again).toMatchObject({ messageId: "a", deliveryCount: 2 });
        expect(again?.lockToken).toEqual(expect.any(String));
        expect(again?.lockToken).not.toEqual(first?.lockToken);
        await expectLockLost(queue.complete(required(first)));
        await expectLockLost(queue.abandon(required(first)));
        await expectLockLost(queue.renewLock(required(first)));
        await expectLockLost(queue.deadLetter(required(first), { reason: "r", description: "d" }));

        await queue.complete(required(again));
        expect(await queue.peek(10)).toEqual([]);
      });

      it("fails to complete after the lock expired even if nobody received the message again", async (ctx) => {
        const { queue, clock } = await setupWithClock(ctx);
        await queue.send(message("a"));
        const [first] = await queue.receive(1);
        await clock.advance(LOCK_MS + 1);

        await expectLockLost(queue.complete(required(first)));
        await expectLockLost(queue.deadLetter(required(first), { reason: "r", description: "d" }));
        const [again] = await queue.receive(1);
        expect(again).toMatchObject({ messageId: "a", deliveryCount: 2 });
      });

      it("dead-letters a message whose lock expired maxDeliveryCount times", async (ctx) => {
        const { queue, clock } = await setupWithClock(ctx);
        await queue.send([message("poison"), message("next")]);
        for (let delivery = 1; delivery <= MAX_DELIVERIES; delivery++) {
          const [received] = await queue.receive(1);
          expect(received).toMatchObject({ messageId: "poison", deliveryCount: delivery });
          await clock.advance(LOCK_MS + 1);
        }

        expect(ids(await queue.receive(1))).toEqual(["next"]);
        expect(ids(await queue.peek(10))).toEqual(["next"]);
        const [dead] = await queue.deadLetterQueue.peek(10);
        expect(dead).toMatchObject({ messageId: "poison", deadLetterReason: MAX_DELIVERY_COUNT_EXCEEDED });
        expect(dead?.deadLetterErrorDescription).toMatch(/\S/);
      });

      it("renewLock keeps the message locked past its first expiry", async (ctx) => {
        const { queue, clock } = await setupWithClock(ctx);
        await queue.send(message("a"));
        const [received] = await queue.receive(1);
        await clock.advance(LOCK_MS / 2);

        const renewedUntil = await queue.renewLock(required(received));
        expect(renewedUntil).toEqual(new Date(clock.now().getTime() + LOCK_MS));
        await clock.advance(LOCK_MS / 2 + 1);
        expect(await queue.receive(10)).toEqual([]);
        await queue.complete(required(received));
        expect(await queue.peek(10)).toEqual([]);
      });

      it("renewLock fails once the lock has expired", async (ctx) => {
        const { queue, clock } = await setupWithClock(ctx);
        await queue.send(message("a"));
        const [received] = await queue.receive(1);
        await clock.advance(LOCK_MS + 1);
        await expectLockLost(queue.renewLock(required(received)));
      });

      it("does not deliver a scheduled message before its scheduledEnqueueTime", async (ctx) => {
        const { queue, clock } = await setupWithClock(ctx);
        const at = new Date(clock.now().getTime() + 10_000);
        await queue.send([message("later", { scheduledEnqueueTime: at }), message("now")]);

        expect(ids(await queue.receive(10))).toEqual(["now"]);
        await clock.advance(9_999);
        expect(await queue.receive(10)).toEqual([]);
        await clock.advance(2);
        expect(ids(await queue.receive(10))).toEqual(["later"]);
      });
    });
  });
}

function message(messageId: string, extra: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return { messageId, body: messageId, ...extra };
}

function ids(messages: readonly ReceivedMessage[]): string[] {
  return messages.map((m) => m.messageId);
}

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("expected a message, got none");
  return value;
}

async function expectLockLost(settlement: Promise<unknown>): Promise<void> {
  await expect(settlement).rejects.toBeInstanceOf(MessageLockLostError);
}
