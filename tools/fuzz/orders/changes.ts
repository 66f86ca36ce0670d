import fc from "fast-check";
import type { OrderItem, OrderMessage } from "../../../src/domain/order.js";
import { QUANTITY } from "./spec.js";
import { validOrder } from "./valid-orders.js";

/** A resend of an order under the same id with other immutable data: a conflict, once the order exists. */
export interface Change {
  readonly field: "customerId" | "currency" | "replyTo" | "items";
  /** Where the new values come from. */
  readonly other: OrderMessage;
  /** Which change of the lines: replaced, reversed, one fewer or one more, one quantity changed. */
  readonly how: number;
}

export const change: fc.Arbitrary<Change> = fc.record({
  field: fc.constantFrom("customerId", "currency", "replyTo", "items"),
  other: validOrder,
  how: fc.nat(3),
});

/** `order` with `change` applied: still a valid message, with the same id and different data. */
export function applyChange(order: OrderMessage, change: Change): OrderMessage {
  const changed = changedOrder(order, change);
  if (JSON.stringify(businessOf(changed)) !== JSON.stringify(businessOf(order))) return changed;
  // The change happened to change nothing: change the customer instead.
  return { ...order, customerId: order.customerId === "someone-else" ? "someone-other" : "someone-else" };
}

function changedOrder(order: OrderMessage, change: Change): OrderMessage {
  const { other } = change;
  switch (change.field) {
    case "customerId":
      return { ...order, customerId: other.customerId };
    case "currency":
      return { ...order, currency: other.currency };
    case "replyTo": {
      const { replyTo: _dropped, ...rest } = order;
      return other.replyTo === undefined ? rest : { ...rest, replyTo: other.replyTo };
    }
    case "items":
      return { ...order, items: changedItems(order, change) };
  }
}

function changedItems(order: OrderMessage, change: Change): OrderMessage["items"] {
  const items = order.items;
  switch (change.how) {
    case 0:
      return change.other.items;
    case 1:
      return [...items].reverse();
    case 2:
      return items.length > 1 ? items.slice(0, -1) : [...items, ...change.other.items.slice(0, 1)];
    default:
      return items.map((item, i) =>
        i === 0 ? { ...item, quantity: (item.quantity % QUANTITY.max) + 1 } : item,
      );
  }
}

/** What must match between two submissions of one order: everything but the message's own framing. */
export function businessOf(order: {
  readonly customerId: string;
  readonly currency: string;
  readonly items: readonly OrderItem[];
  readonly replyTo?: string | undefined;
}) {
  return {
    customerId: order.customerId,
    currency: order.currency,
    items: order.items.map((item) => [item.sku, item.quantity, item.unitPriceMinor]),
    replyTo: order.replyTo ?? null,
  };
}
