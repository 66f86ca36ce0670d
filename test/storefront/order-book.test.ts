import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import type { OrderStatus, StatusMessage } from "../../src/domain/status-message.js";
import { OrderBook, type PlacedOrder, UnreadableRowError } from "../../storefront/order-book.js";

const AT = "2026-05-01T09:00:00.000Z";
const T0 = Date.parse(AT);
const ORDER: PlacedOrder = {
  orderId: "sf-1",
  customerId: "guest-1",
  placedAt: AT,
  currency: "EUR",
  items: [
    { sku: "TEA-SENCHA", name: "Sencha green tea", quantity: 2, unitPriceMinor: 1250 },
    { sku: "MUG-STONE", name: "Stoneware mug", quantity: 1, unitPriceMinor: 1800 },
  ],
  message: { messageId: "sf-1:abc", body: { orderId: "sf-1", replyTo: "sf-status" }, subject: "order" },
};

function other(orderId: string): PlacedOrder {
  return { ...ORDER, orderId, message: { ...ORDER.message, messageId: `${orderId}:abc` } };
}

function status(status: OrderStatus, attempt: number, detail: string | null = null): StatusMessage {
  return { schemaVersion: 1, orderId: "sf-1", status, attempt, at: AT, detail };
}

let book: OrderBook | undefined;
let folder: string | undefined;
let logger = new MemoryLogger();
afterEach(() => {
  book?.close();
  book = undefined;
  if (folder) rmSync(folder, { recursive: true, force: true });
  folder = undefined;
  logger = new MemoryLogger();
});

function openBook(path = ":memory:"): OrderBook {
  book = OrderBook.open(path, logger);
  return book;
}

function bookFile(): string {
  folder = mkdtempSync(join(tmpdir(), "order-book-"));
  return join(folder, "orders.sqlite");
}

describe("the order book", () => {
  it("keeps a placed order, priced, as Submitted until a status arrives", () => {
    const b = openBook();
    b.place(ORDER, T0);
    expect(b.get("sf-1")).toEqual({
      orderId: "sf-1",
      placedAt: AT,
      items: ORDER.items,
      totalMinor: 2 * 1250 + 1800,
      currency: "EUR",
      state: "Submitted",
      detail: null,
      delivery: "sending",
      statuses: [],
    });
    expect(b.get("sf-2")).toBeUndefined();
  });

  it("keeps each status once: a redelivered status is a duplicate", () => {
    const b = openBook();
    b.place(ORDER, T0);
    expect(b.record(status("received", 0), AT)).toBe("recorded");
    expect(b.record(status("received", 0), AT)).toBe("duplicate");
    expect(b.get("sf-1")?.statuses).toHaveLength(1);
    expect(b.get("sf-1")?.state).toBe("Pending");
  });

  it("never moves the state back when statuses arrive out of order", () => {
    const b = openBook();
    b.place(ORDER, T0);
    b.record(status("completed", 1), AT);
    b.record(status("received", 0), AT);
    b.record(status("processing", 1), AT);
    const order = b.get("sf-1");
    expect(order?.state).toBe("Processed");
    // Listed in the life of the order, not in the order they arrived.
    expect(order?.statuses.map((s) => s.status)).toEqual(["received", "processing", "completed"]);
  });

  it("lets a later attempt supersede an earlier failure, and not the other way round", () => {
    const b = openBook();
    b.place(ORDER, T0);
    b.record(status("processing", 2), AT);
    b.record(status("failed", 1, "RecoveriesExhausted"), AT);
    expect(b.get("sf-1")).toMatchObject({ state: "Processing", detail: null });
    b.record(status("completed", 2), AT);
    expect(b.get("sf-1")?.state).toBe("Processed");
  });

  it("gives a failed order its reason, and a compensated one the reason it was compensated", () => {
    const b = openBook();
    b.place(ORDER, T0);
    b.record(status("processing", 1), AT);
    b.record(status("compensating", 1, "Http422: payment declined"), AT);
    b.record(status("compensated", 1), AT);
    expect(b.get("sf-1")).toMatchObject({ state: "Compensated", detail: "Http422: payment declined" });

    b.place(other("sf-2"), T0);
    b.record({ ...status("failed", 1, "Http422: out-of-stock"), orderId: "sf-2" }, AT);
    expect(b.get("sf-2")).toMatchObject({ state: "Error", detail: "Http422: out-of-stock" });
  });

  it("does not keep a status of an order it never placed", () => {
    const b = openBook();
    expect(b.record(status("received", 0), AT)).toBe("unknownOrder");
    b.place(ORDER, T0);
    expect(b.get("sf-1")?.statuses).toEqual([]);
  });

  it("lists the orders asked for, in that order, leaving out unknown ids", () => {
    const b = openBook();
    b.place(ORDER, T0);
    b.place(other("sf-2"), T0);
    expect(b.list(["sf-2", "nope", "sf-1"]).map((o) => o.orderId)).toEqual(["sf-2", "sf-1"]);
  });

  it("survives closing and reopening its file", () => {
    const path = bookFile();
    const first = OrderBook.open(path, logger);
    first.place(ORDER, T0);
    first.record(status("received", 0), AT);
    first.record(status("failed", 1, "Http422: out-of-stock"), AT);
    first.close();

    const b = openBook(path);
    expect(b.get("sf-1")).toMatchObject({
      state: "Error",
      detail: "Http422: out-of-stock",
      totalMinor: 4300,
    });
    expect(b.record(status("failed", 1, "Http422: out-of-stock"), AT)).toBe("duplicate");
  });

  it("keeps its file with a rollback journal, which a network share (App Service's /home) supports", () => {
    const path = bookFile();
    const opened = OrderBook.open(path, logger);
    opened.place(ORDER, T0);
    opened.close();
    // The file header's read and write versions (bytes 18 and 19): 1 for a rollback journal, 2 for WAL.
    expect([...readFileSync(path).subarray(18, 20)]).toEqual([1, 1]);
  });
});

describe("the order book's outbox", () => {
  it("keeps each placed order's message until it is marked sent, then shows the order sent", () => {
    const b = openBook();
    b.place(ORDER, T0);
    expect(b.dueSends(T0 - 1, 10)).toEqual([]);
    const [entry] = b.dueSends(T0, 10);
    expect(entry).toEqual({ orderId: "sf-1", placedAt: AT, attempts: 0, message: ORDER.message });
    expect(b.pendingSend("sf-1", T0)).toEqual(entry);
    b.markSent("sf-1");
    expect(b.pendingSend("sf-1", T0)).toBeUndefined();
    expect(b.dueSends(T0, 10)).toEqual([]);
    expect(b.get("sf-1")?.delivery).toBe("sent");
  });

  it("defers a failed send, names when the next is due, and makes every one due at once on request", () => {
    const b = openBook();
    b.place(ORDER, T0);
    b.place(other("sf-2"), T0);
    b.deferSend("sf-1", 1, T0 + 2_000, "unreachable");
    b.deferSend("sf-2", 3, T0 + 8_000, "unreachable");
    expect(b.dueSends(T0, 10)).toEqual([]);
    expect(b.nextSendAfter(T0)).toBe(T0 + 2_000);
    expect(b.dueSends(T0 + 2_000, 10).map((e) => [e.orderId, e.attempts])).toEqual([["sf-1", 1]]);
    b.sendAllNow(T0 + 3_000);
    expect(b.dueSends(T0 + 3_000, 10).map((e) => e.orderId)).toEqual(["sf-1", "sf-2"]);
    expect(b.get("sf-1")?.delivery).toBe("sending");
  });

  it("stops resending an order given up on, and shows it not sent", () => {
    const b = openBook();
    b.place(ORDER, T0);
    b.abandonSend("sf-1", 12, AT, "unreachable");
    expect(b.dueSends(T0 + 60_000, 10)).toEqual([]);
    expect(b.nextSendAfter(T0)).toBeNull();
    b.sendAllNow(T0);
    expect(b.pendingSend("sf-1", T0)).toBeUndefined();
    expect(b.get("sf-1")).toMatchObject({ state: "Submitted", delivery: "notSent" });
  });

  it("F24-3: records a status of an order still in the outbox, and takes the order out of it", () => {
    const b = openBook();
    b.place(ORDER, T0);
    expect(b.record(status("received", 0), AT)).toBe("recorded");
    expect(b.pendingSend("sf-1", T0)).toBeUndefined();
    expect(b.get("sf-1")).toMatchObject({ state: "Pending", delivery: "sent" });
  });
});

describe("F24-10: rows read back from the order book's file are checked", () => {
  function corrupt(path: string, sql: string): void {
    const db = new Database(path);
    db.exec(sql);
    db.close();
  }

  it("refuses an order whose lines are not what was written, naming the row, and leaves it out of lists", () => {
    const path = bookFile();
    const b = openBook(path);
    b.place(ORDER, T0);
    b.place(other("sf-2"), T0);
    corrupt(
      path,
      `UPDATE storefront_orders SET items = '[{"sku":"TEA","quantity":"two"}]' WHERE order_id = 'sf-1'`,
    );
    expect(() => b.get("sf-1")).toThrow(UnreadableRowError);
    expect(() => b.get("sf-1")).toThrow(
      /^storefront_orders row sf-1 cannot be read: items\[0\]\.name: is required; items\[0\]\.quantity: must be a number/,
    );
    expect(b.list(["sf-1", "sf-2"]).map((o) => o.orderId)).toEqual(["sf-2"]);
    expect(logger.events("storefront.orderBook.unreadableRow")[0]).toMatchObject({
      table: "storefront_orders",
      key: "sf-1",
    });
    corrupt(path, `UPDATE storefront_orders SET items = 'not json' WHERE order_id = 'sf-2'`);
    expect(() => b.get("sf-2")).toThrow("storefront_orders row sf-2 cannot be read: items: is not JSON");
  });

  it("leaves out a status row it cannot read, naming it, and shows the rest", () => {
    const path = bookFile();
    const b = openBook(path);
    b.place(ORDER, T0);
    b.record(status("received", 0), AT);
    b.record(status("processing", 1), AT);
    corrupt(
      path,
      `UPDATE storefront_statuses SET status = 'shipped', attempt = -1 WHERE message_id = 'sf-1:1:processing'`,
    );
    expect(b.get("sf-1")).toMatchObject({ state: "Pending", statuses: [{ status: "received" }] });
    const [line] = logger.events("storefront.orderBook.unreadableRow");
    expect(line).toMatchObject({ table: "storefront_statuses", key: "sf-1:1:processing" });
    expect(line?.error).toMatch(/status: must be one of received, .*; attempt: must be an integer from 0/);
  });

  it("gives up at once on an outbox row it cannot read, rather than send it as something it is not", () => {
    const path = bookFile();
    const b = openBook(path);
    b.place(ORDER, T0);
    corrupt(path, `UPDATE storefront_outbox SET body = '[1,2]' WHERE order_id = 'sf-1'`);
    expect(b.dueSends(T0, 10)).toEqual([]);
    expect(logger.events("storefront.orderBook.unreadableRow")).toHaveLength(1);
    expect(b.dueSends(T0, 10)).toEqual([]);
    expect(logger.events("storefront.orderBook.unreadableRow")).toHaveLength(1);
    expect(b.get("sf-1")?.delivery).toBe("notSent");
  });
});
