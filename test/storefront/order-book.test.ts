import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { OrderStatus, StatusMessage } from "../../src/domain/status-message.js";
import { OrderBook, type PlacedOrder } from "../../storefront/order-book.js";

const AT = "2026-05-01T09:00:00.000Z";
const ORDER: PlacedOrder = {
  orderId: "sf-1",
  customerId: "guest-1",
  placedAt: AT,
  currency: "EUR",
  items: [
    { sku: "TEA-SENCHA", name: "Sencha green tea", quantity: 2, unitPriceMinor: 1250 },
    { sku: "MUG-STONE", name: "Stoneware mug", quantity: 1, unitPriceMinor: 1800 },
  ],
  messageId: "sf-1:abc",
};

function status(status: OrderStatus, attempt: number, detail: string | null = null): StatusMessage {
  return { schemaVersion: 1, orderId: "sf-1", status, attempt, at: AT, detail };
}

let book: OrderBook | undefined;
let folder: string | undefined;
afterEach(() => {
  book?.close();
  book = undefined;
  if (folder) rmSync(folder, { recursive: true, force: true });
  folder = undefined;
});

function openBook(path = ":memory:"): OrderBook {
  book = OrderBook.open(path);
  return book;
}

describe("the order book", () => {
  it("keeps a placed order, priced, as Submitted until a status arrives", () => {
    const b = openBook();
    b.place(ORDER);
    expect(b.get("sf-1")).toEqual({
      orderId: "sf-1",
      placedAt: AT,
      items: ORDER.items,
      totalMinor: 2 * 1250 + 1800,
      currency: "EUR",
      state: "Submitted",
      detail: null,
      statuses: [],
    });
    expect(b.get("sf-2")).toBeUndefined();
  });

  it("keeps each status once: a redelivered status is a duplicate", () => {
    const b = openBook();
    b.place(ORDER);
    expect(b.record(status("received", 0), AT)).toBe("recorded");
    expect(b.record(status("received", 0), AT)).toBe("duplicate");
    expect(b.get("sf-1")?.statuses).toHaveLength(1);
    expect(b.get("sf-1")?.state).toBe("Pending");
  });

  it("never moves the state back when statuses arrive out of order", () => {
    const b = openBook();
    b.place(ORDER);
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
    b.place(ORDER);
    b.record(status("processing", 2), AT);
    b.record(status("failed", 1, "RecoveriesExhausted"), AT);
    expect(b.get("sf-1")).toMatchObject({ state: "Processing", detail: null });
    b.record(status("completed", 2), AT);
    expect(b.get("sf-1")?.state).toBe("Processed");
  });

  it("gives a failed order its reason, and a compensated one the reason it was compensated", () => {
    const b = openBook();
    b.place(ORDER);
    b.record(status("processing", 1), AT);
    b.record(status("compensating", 1, "Http422: payment declined"), AT);
    b.record(status("compensated", 1), AT);
    expect(b.get("sf-1")).toMatchObject({ state: "Compensated", detail: "Http422: payment declined" });

    const other = { ...ORDER, orderId: "sf-2", messageId: "sf-2:abc" };
    b.place(other);
    b.record({ ...status("failed", 1, "Http422: out-of-stock"), orderId: "sf-2" }, AT);
    expect(b.get("sf-2")).toMatchObject({ state: "Error", detail: "Http422: out-of-stock" });
  });

  it("does not keep a status of an order it never placed", () => {
    const b = openBook();
    expect(b.record(status("received", 0), AT)).toBe("unknownOrder");
    b.place(ORDER);
    expect(b.get("sf-1")?.statuses).toEqual([]);
  });

  it("lists the orders asked for, in that order, leaving out unknown ids", () => {
    const b = openBook();
    b.place(ORDER);
    b.place({ ...ORDER, orderId: "sf-2", messageId: "sf-2:abc" });
    expect(b.list(["sf-2", "nope", "sf-1"]).map((o) => o.orderId)).toEqual(["sf-2", "sf-1"]);
  });

  it("forgets an order that could not be sent, with its statuses", () => {
    const b = openBook();
    b.place(ORDER);
    b.record(status("received", 0), AT);
    b.forget("sf-1");
    expect(b.get("sf-1")).toBeUndefined();
  });

  it("survives closing and reopening its file", () => {
    folder = mkdtempSync(join(tmpdir(), "order-book-"));
    const path = join(folder, "orders.sqlite");
    const first = OrderBook.open(path);
    first.place(ORDER);
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
    folder = mkdtempSync(join(tmpdir(), "order-book-"));
    const path = join(folder, "orders.sqlite");
    const opened = OrderBook.open(path);
    opened.place(ORDER);
    opened.close();
    // The file header's read and write versions (bytes 18 and 19): 1 for a rollback journal, 2 for WAL.
    expect([...readFileSync(path).subarray(18, 20)]).toEqual([1, 1]);
  });
});
