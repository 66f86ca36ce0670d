/**
 * What the order book reads back from its file, checked before it is used: a row written by an older or
 * newer build, or changed by hand, is refused with an error naming its table, its key and each field
 * that is wrong, instead of reaching a shopper or the orders queue as something it is not.
 */
import { z } from "zod";
import { orderItemSchema } from "../src/domain/order.js";
import { ORDER_STATUSES } from "../src/domain/status-message.js";
import { isoInstantSchema } from "../src/domain/time.js";
import { integer, oneOf, text, type ValidationError, validate } from "../src/domain/validation.js";
import type { JsonValue, OutgoingMessage } from "../src/ports/message-queue.js";

/** How far the order's message got: in the outbox, acknowledged by the queue, or given up on. */
export const DELIVERIES = ["sending", "sent", "notSent"] as const;
export type Delivery = (typeof DELIVERIES)[number];

const orderLineSchema = z.strictObject({
  sku: orderItemSchema.shape.sku,
  name: text(1, 200),
  quantity: orderItemSchema.shape.quantity,
  unitPriceMinor: orderItemSchema.shape.unitPriceMinor,
});
export type OrderLine = z.infer<typeof orderLineSchema>;

/** A TEXT column holding JSON, parsed, then checked against `schema`. */
function jsonText<T extends z.ZodType>(schema: T) {
  return z
    .string()
    .transform((value, ctx): unknown => {
      try {
        return JSON.parse(value);
      } catch {
        ctx.issues.push({ code: "custom", message: "is not JSON", input: value });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

const orderRowSchema = z
  .object({
    order_id: text(1, 64),
    placed_at: isoInstantSchema,
    currency: text(3, 3),
    items: jsonText(z.array(orderLineSchema).min(1, { error: "must hold at least one line" })),
    total_minor: integer(0, Number.MAX_SAFE_INTEGER),
    delivery: oneOf(DELIVERIES),
  })
  .transform((row) => ({
    orderId: row.order_id,
    placedAt: row.placed_at,
    currency: row.currency,
    items: row.items,
    totalMinor: row.total_minor,
    delivery: row.delivery,
  }));
export type OrderRecord = z.infer<typeof orderRowSchema>;

const statusRowSchema = z
  .object({
    status: oneOf(ORDER_STATUSES),
    attempt: integer(0, 1_000_000),
    at: isoInstantSchema,
    detail: z.string().nullable(),
  })
  .strip();
export type StatusEntry = z.infer<typeof statusRowSchema>;

const outboxRowSchema = z
  .object({
    order_id: text(1, 64),
    placed_at: isoInstantSchema,
    message_id: text(1, 128),
    body: jsonText(z.record(z.string(), z.json())),
    subject: z.string().nullable(),
    attempts: integer(0, Number.MAX_SAFE_INTEGER),
  })
  .transform((row) => ({
    orderId: row.order_id,
    placedAt: row.placed_at,
    attempts: row.attempts,
    message: outgoing(row.message_id, row.body as JsonValue, row.subject),
  }));

function outgoing(messageId: string, body: JsonValue, subject: string | null): OutgoingMessage {
  return subject === null ? { messageId, body } : { messageId, body, subject };
}
/** A placed order's message waiting in the outbox for the orders queue to acknowledge it. */
export type OutboxEntry = z.infer<typeof outboxRowSchema>;

/** A row of the order book that does not hold what the storefront wrote there. */
export class UnreadableRowError extends Error {
  override readonly name = "UnreadableRowError";
  constructor(
    readonly table: string,
    readonly key: string,
    readonly problem: ValidationError,
  ) {
    const fields = problem.issues.map((issue) => `${issue.field}: ${issue.message}`).join("; ");
    super(`${table} row ${key} cannot be read: ${fields}`);
  }
}

type Read<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: UnreadableRowError };

function reader<T>(table: string, schema: z.ZodType<T>) {
  return (key: string, row: unknown): Read<T> => {
    const parsed = validate(`${table} row`, schema, row);
    return parsed.ok ? parsed : { ok: false, error: new UnreadableRowError(table, key, parsed.error) };
  };
}

export const readOrderRow = reader("storefront_orders", orderRowSchema);
export const readStatusRow = reader("storefront_statuses", statusRowSchema);
export const readOutboxRow = reader("storefront_outbox", outboxRowSchema);
