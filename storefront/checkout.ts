/**
 * Checkout: a cart from the browser becomes an order message for the Scheduler. The storefront decides
 * the order id, the customer id and every price (from the catalogue, never from the browser), and names
 * its own status queue as `replyTo`, so the Scheduler's status messages come back to it alone.
 */
import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { ORDER_SCHEMA_VERSION, type OrderMessage, parseOrderMessage } from "../src/domain/order.js";
import { err, ok, type Result } from "../src/domain/result.js";
import { integer, text, typeError, validate } from "../src/domain/validation.js";
import type { OutgoingMessage } from "../src/ports/message-queue.js";
import type { Catalogue } from "./catalogue.js";

export const MAX_CART_LINES = 20;
export const MAX_QUANTITY = 99;
/** A cart is a few hundred bytes; anything much larger is not one. */
export const MAX_CART_BYTES = 16 * 1024;

const cartSchema = z.strictObject({
  items: z
    .array(z.strictObject({ sku: text(1, 64), quantity: integer(1, MAX_QUANTITY) }), {
      error: typeError("an array"),
    })
    .min(1, { error: "must hold at least one product: the cart is empty" })
    .max(MAX_CART_LINES, { error: `must hold at most ${MAX_CART_LINES} products` }),
});

export interface CartLine {
  readonly sku: string;
  readonly quantity: number;
}

/** The cart's lines, or a sentence naming each thing wrong with it (for a 400). */
export function parseCart(body: string, catalogue: Catalogue): Result<CartLine[], string> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return err('the body is not JSON: send {"items":[{"sku":"...","quantity":1}]}');
  }
  const parsed = validate("cart", cartSchema, value);
  if (!parsed.ok) return err(parsed.error.message);
  const problems: string[] = [];
  const seen = new Set<string>();
  parsed.value.items.forEach((line, i) => {
    if (!catalogue.product(line.sku)) problems.push(`items[${i}].sku: ${line.sku} is not in the catalogue`);
    if (seen.has(line.sku)) problems.push(`items[${i}].sku: ${line.sku} is in the cart twice`);
    seen.add(line.sku);
  });
  if (problems.length > 0) return err(`invalid cart: ${problems.join("; ")}`);
  return ok(parsed.value.items);
}

/** A new order id: the time it was made (so ids sort by age) and 48 random bits. */
export function newOrderId(now: Date): string {
  return `sf-${now.getTime().toString(36)}-${randomBytes(6).toString("hex")}`;
}

export function newCustomerId(): string {
  return `guest-${randomBytes(6).toString("hex")}`;
}

export interface OrderToPlace {
  readonly orderId: string;
  readonly customerId: string;
  readonly lines: readonly CartLine[];
  readonly replyTo: string;
}

/** The order message, priced from the catalogue and checked against the public contract. */
export function orderMessageFor(order: OrderToPlace, catalogue: Catalogue): OrderMessage {
  const message = {
    schemaVersion: ORDER_SCHEMA_VERSION,
    orderId: order.orderId,
    customerId: order.customerId,
    currency: catalogue.currency,
    items: order.lines.map((line) => ({
      sku: line.sku,
      quantity: line.quantity,
      unitPriceMinor: catalogue.product(line.sku)?.unitPriceMinor ?? 0,
    })),
    replyTo: order.replyTo,
  };
  const parsed = parseOrderMessage(message);
  // The cart was validated against the catalogue; a refusal here is a fault of this code or its settings.
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

/**
 * The message for the orders queue. Its id is derived from its content, as the Scheduler's own senders
 * derive theirs: sending it again is dropped by duplicate detection.
 */
export function orderQueueMessage(message: OrderMessage): OutgoingMessage {
  const { replyTo, ...rest } = message;
  const body = {
    ...rest,
    items: message.items.map((item) => ({ ...item })),
    ...(replyTo !== undefined ? { replyTo } : {}),
  };
  const digest = createHash("sha256").update(JSON.stringify(body)).digest("hex").slice(0, 16);
  return { messageId: `${message.orderId}:${digest}`, body, subject: "order" };
}
