import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteMessageQueue } from "../../laptop/sqlite/sqlite-message-queue.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { type StatusMessage, statusMessageId } from "../../src/domain/status-message.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import { LiveOrders } from "../../storefront/live-orders.js";
import { OrderBook, type OrderView } from "../../storefront/order-book.js";
import { createStatusHandler, startStatusConsumer } from "../../storefront/status-consumer.js";

const AT = "2026-05-01T09:00:00.000Z";

interface Harness {
  readonly db: EmbeddedDatabase;
  readonly clock: VirtualClock;
  readonly queue: SqliteMessageQueue;
  readonly book: OrderBook;
  readonly live: LiveOrders;
  readonly logger: MemoryLogger;
}

let open: Harness[] = [];
afterEach(() => {
  for (const h of open) {
    h.db.close();
    h.book.close();
  }
  open = [];
});

function harness(): Harness {
  const db = openDatabase(":memory:");
  const clock = new VirtualClock(AT);
  const logger = new MemoryLogger();
  const book = OrderBook.open(":memory:", logger);
  book.place(
    {
      orderId: "sf-1",
      customerId: "guest-1",
      placedAt: AT,
      currency: "EUR",
      items: [{ sku: "NOTE-A5", name: "A5 notebook", quantity: 1, unitPriceMinor: 900 }],
      message: { messageId: "sf-1:abc", body: { orderId: "sf-1" } },
    },
    Date.parse(AT),
  );
  const h = {
    db,
    clock,
    queue: new SqliteMessageQueue(db, clock, "sf-status"),
    book,
    live: new LiveOrders(),
    logger,
  };
  open.push(h);
  return h;
}

const received: StatusMessage = {
  schemaVersion: 1,
  orderId: "sf-1",
  status: "received",
  attempt: 0,
  at: AT,
  detail: null,
};

async function deliver(h: Harness, body: JsonValue, messageId = "m-1") {
  await h.queue.send({ messageId, body });
  const [message] = await h.queue.receive(1);
  if (!message) throw new Error("nothing to receive");
  return message;
}

describe("the storefront's status consumer", () => {
  it("records a status, tells the order's watchers and completes the message", async () => {
    const h = harness();
    const told: OrderView[] = [];
    h.live.watch("sf-1", (order) => told.push(order));
    const handle = createStatusHandler(h);
    expect(await handle(await deliver(h, { ...received }, statusMessageId(received)))).toBe(true);
    expect(h.book.get("sf-1")?.state).toBe("Pending");
    expect(told.map((order) => order.state)).toEqual(["Pending"]);
    expect(await h.queue.peek(10)).toEqual([]);
    expect(h.logger.events("storefront.status.recorded")[0]).toMatchObject({
      orderId: "sf-1",
      state: "Pending",
    });
  });

  it("completes a duplicate without telling anyone again", async () => {
    const h = harness();
    const handle = createStatusHandler(h);
    await handle(await deliver(h, { ...received }, "first"));
    const told: OrderView[] = [];
    h.live.watch("sf-1", (order) => told.push(order));
    expect(await handle(await deliver(h, { ...received }, "again"))).toBe(true);
    expect(told).toEqual([]);
    expect(await h.queue.peek(10)).toEqual([]);
    expect(h.logger.events("storefront.status.duplicate")).toHaveLength(1);
  });

  it("dead-letters an invalid status message with its reason", async () => {
    const h = harness();
    const handle = createStatusHandler(h);
    expect(await handle(await deliver(h, { ...received, status: "shipped" }))).toBe(true);
    const [parked] = await h.queue.deadLetterQueue.peek(10);
    expect(parked?.deadLetterReason).toBe("InvalidStatusMessage");
    expect(parked?.deadLetterErrorDescription).toMatch(/status: must be one of received, processing/);
    expect(h.book.get("sf-1")?.statuses).toEqual([]);
  });

  it("dead-letters the status of an order it never placed", async () => {
    const h = harness();
    const handle = createStatusHandler(h);
    await handle(await deliver(h, { ...received, orderId: "someone-else" }));
    const [parked] = await h.queue.deadLetterQueue.peek(10);
    expect(parked?.deadLetterReason).toBe("UnknownOrder");
    expect(parked?.deadLetterErrorDescription).toBe("order someone-else was not placed by this storefront");
  });

  it("abandons a message it failed to record, so the queue delivers it again", async () => {
    const h = harness();
    const handle = createStatusHandler(h);
    h.book.close(); // every write now fails
    expect(await handle(await deliver(h, { ...received }))).toBe(false);
    const [again] = await h.queue.receive(1);
    expect(again?.deliveryCount).toBe(2);
    expect(h.logger.events("storefront.status.failed")[0]?.error).toMatch(/not open/);
  });

  it("receives until stopped, pausing between empty receives on its clock", async () => {
    const h = harness();
    await h.queue.send({ messageId: "m-1", body: { ...received } });
    await h.queue.send({ messageId: "m-2", body: { ...received, status: "processing", attempt: 1 } });
    const consumer = startStatusConsumer({ ...h, pollIntervalMs: 1_000 });
    await expect.poll(() => h.book.get("sf-1")?.state).toBe("Processing");
    await expect.poll(() => h.clock.pendingSleeps).toBe(1);
    await h.queue.send({ messageId: "m-3", body: { ...received, status: "completed", attempt: 1 } });
    expect(h.book.get("sf-1")?.state).toBe("Processing"); // asleep until the clock moves
    await h.clock.advance(1_000);
    await expect.poll(() => h.book.get("sf-1")?.state).toBe("Processed");
    await consumer.stop();
  });
});
