import { describe, expect, it } from "vitest";
import { orderMessageId } from "../../src/scheduler/order-message-id.js";

describe("orderMessageId", () => {
  const order = { orderId: "ord-1", customerId: "c", items: [{ sku: "A", quantity: 1 }] };

  it("is the same for the same content, so a resend is a duplicate", () => {
    expect(orderMessageId({ ...order })).toBe(orderMessageId(order));
  });

  it("differs when a message reuses an order id with other content, so submission sees the conflict", () => {
    const other = { ...order, customerId: "d" };
    expect(orderMessageId(other)).not.toBe(orderMessageId(order));
    expect(orderMessageId(other).startsWith("ord-1:")).toBe(true);
  });

  it("stays within Service Bus's 128-character limit for any order id", () => {
    expect(orderMessageId({ orderId: "x".repeat(500) }).length).toBeLessThanOrEqual(128);
    expect(orderMessageId("not an object")).toMatch(/^:[0-9a-f]{16}$/);
  });
});
