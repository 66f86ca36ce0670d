import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sendOrders } from "../../laptop/cli/send-orders.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteMessageQueue } from "../../laptop/sqlite/sqlite-message-queue.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { parseOrderMessage } from "../../src/domain/order.js";

let db: EmbeddedDatabase;
let queue: SqliteMessageQueue;
beforeEach(() => {
  db = openDatabase(":memory:");
  queue = new SqliteMessageQueue(db, new VirtualClock(), "orders");
});
afterEach(() => db.close());

describe("sendOrders", () => {
  it("posts valid order messages in batches, naming the status queue as replyTo", async () => {
    const result = await sendOrders({
      queue,
      count: 7,
      prefix: "run1",
      seed: 3,
      replyTo: "order-status",
      batchSize: 3,
    });
    expect(result.sent).toBe(7);
    const messages = await queue.peek(100);
    expect(messages.map((m) => (m.body as { orderId: string }).orderId)).toEqual(result.orderIds);
    for (const message of messages) {
      const parsed = parseOrderMessage(JSON.stringify(message.body));
      expect(parsed.ok).toBe(true);
      expect(message.messageId.startsWith(`${(message.body as { orderId: string }).orderId}:`)).toBe(true);
      expect((message.body as { replyTo: string }).replyTo).toBe("order-status");
    }
  });

  it("sends the same messages again for the same prefix and seed, which duplicate detection drops", async () => {
    await sendOrders({ queue, count: 5, prefix: "run2", seed: 9, replyTo: "order-status" });
    await sendOrders({ queue, count: 5, prefix: "run2", seed: 9, replyTo: "order-status" });
    expect(await queue.peek(100)).toHaveLength(5);
  });
});
