import { z } from "zod";
import { err, type Result } from "./result.js";
import { integer, literal, text, typeError, ValidationError, validateVersioned } from "./validation.js";

export const ORDER_SCHEMA_VERSION = 1;
/** Messages larger than this are rejected before they are parsed. */
export const MAX_ORDER_MESSAGE_BYTES = 64 * 1024;

/**
 * Queues the pipeline itself reads or writes (config/names.ts names them for Azure; a test keeps the two
 * in step). Service Bus queue names ignore case, so a `replyTo` is compared in lower case.
 */
export const PIPELINE_QUEUES: readonly string[] = [
  "orders",
  "invalid-messages",
  "agent-requests",
  "agent-responses",
];

const IDENTIFIER = { regex: /^[A-Za-z0-9\-_.:]+$/, description: "letters, digits and - _ . :" };
const identifier = () => text(1, 64, IDENTIFIER);

export const orderItemSchema = z.strictObject({
  sku: identifier(),
  quantity: integer(1, 1_000),
  unitPriceMinor: integer(0, 100_000_000),
});

/** The public contract: the orders queue, `POST /api/orders` and `sas send` all take exactly this. */
export const orderMessageSchema = z.strictObject({
  schemaVersion: literal(ORDER_SCHEMA_VERSION),
  orderId: identifier(),
  customerId: identifier(),
  currency: text(3, 3, { regex: /^[A-Z]{3}$/, description: "three capital letters (ISO 4217)" }),
  items: z
    .array(orderItemSchema, { error: typeError("an array") })
    .min(1, { error: "must hold 1 to 100 items" })
    .max(100, { error: "must hold 1 to 100 items" }),
  replyTo: text(1, 260, {
    regex: /^[A-Za-z0-9][A-Za-z0-9\-_./~]*$/,
    description: "a queue name: letters, digits and - _ . / ~",
  })
    .refine((name) => !PIPELINE_QUEUES.includes(name.toLowerCase()), {
      error: `must not name one of the pipeline's own queues (${[...new Set(PIPELINE_QUEUES)].join(", ")}): status messages would land among its work`,
      params: { rule: "reserved" },
    })
    .optional(),
});

export type OrderItem = z.infer<typeof orderItemSchema>;
export type OrderMessage = z.infer<typeof orderMessageSchema>;

/** The order as the orders database keeps it: the message's immutable business data. */
export interface Order {
  readonly orderId: string;
  readonly customerId: string;
  readonly currency: string;
  readonly items: readonly OrderItem[];
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

/**
 * Parses an order message from its wire form (text or bytes) or from an already-decoded JSON value, as
 * a Service Bus binding hands it over. Size is checked first, then JSON syntax, then every field rule.
 */
export function parseOrderMessage(
  input: string | Uint8Array | unknown,
): Result<OrderMessage, ValidationError> {
  let value: unknown = input;
  if (typeof input === "string" || input instanceof Uint8Array) {
    const size = typeof input === "string" ? utf8Length(input) : input.byteLength;
    if (size > MAX_ORDER_MESSAGE_BYTES) return tooLarge(size);
    const text = typeof input === "string" ? input : new TextDecoder().decode(input);
    try {
      value = JSON.parse(text);
    } catch (cause) {
      const detail = cause instanceof Error ? cause.message : String(cause);
      return err(
        new ValidationError("order message", [
          { field: "(message)", rule: "json", message: `is not valid JSON (${detail})` },
        ]),
      );
    }
  } else {
    const size = serializedSize(input);
    if (size !== undefined && size > MAX_ORDER_MESSAGE_BYTES) return tooLarge(size);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return err(
      new ValidationError("order message", [
        { field: "(message)", rule: "type", message: "must be a JSON object" },
      ]),
    );
  }
  return validateVersioned("order message", orderMessageSchema, ORDER_SCHEMA_VERSION, value);
}

/**
 * The size of a decoded value as JSON text; undefined when JSON.stringify gives up (on a value nested
 * some thousands deep, as another client may send). No order is nested more than three deep, so
 * validation then refuses it, naming where.
 */
/**
 * The UTF-8 length of `JSON.stringify(value)`, worked out with a stack of its own rather than by
 * recursion, so a value nested deeper than `JSON.stringify` can go is measured too. It stops once the
 * count passes `MAX_ORDER_MESSAGE_BYTES` (nothing past the limit changes the answer); undefined when
 * the value cannot be serialized at all (a cycle, a `toJSON` that throws).
 */
function serializedSize(value: unknown): number | undefined {
  const pending: unknown[] = [value];
  const onPath = new Set<object>();
  let size = 0;
  while (pending.length > 0 && size <= MAX_ORDER_MESSAGE_BYTES) {
    const next = pending.pop();
    if (next instanceof LeaveContainer) {
      onPath.delete(next.container);
      continue;
    }
    const measured = measureOne(next, pending, onPath);
    if (measured === undefined) return undefined;
    size += measured;
  }
  return size;
}

/** Marks where a container's members end on the stack, to take it off the path of open containers. */
class LeaveContainer {
  constructor(readonly container: object) {}
}

/** The bytes `value` adds itself, its members pushed to measure next; undefined if it cannot be serialized. */
function measureOne(value: unknown, pending: unknown[], onPath: Set<object>): number | undefined {
  let current = value;
  try {
    while (hasToJson(current)) current = current.toJSON();
  } catch {
    return undefined;
  }
  if (current === null || current === undefined || typeof current === "function") return 4;
  if (typeof current === "boolean") return current ? 4 : 5;
  if (typeof current === "number") return Number.isFinite(current) ? String(current).length : 4;
  if (typeof current === "bigint" || typeof current === "symbol") return undefined;
  if (typeof current === "string") return utf8Length(JSON.stringify(current));
  if (typeof current !== "object" || onPath.has(current)) return undefined;
  onPath.add(current);
  pending.push(new LeaveContainer(current));
  if (Array.isArray(current)) {
    for (const member of current) pending.push(member);
    return 2 + Math.max(0, current.length - 1);
  }
  const entries = Object.entries(current).filter(
    ([, member]) => member !== undefined && typeof member !== "function",
  );
  let own = 2 + Math.max(0, entries.length - 1);
  for (const [key, member] of entries) {
    own += utf8Length(JSON.stringify(key)) + 1;
    pending.push(member);
  }
  return own;
}

function hasToJson(value: unknown): value is { toJSON(): unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  );
}

function tooLarge(size: number): Result<never, ValidationError> {
  return err(
    new ValidationError("order message", [
      {
        field: "(message)",
        rule: "maxBytes",
        message: `is ${size} bytes; the limit is ${MAX_ORDER_MESSAGE_BYTES} bytes`,
      },
    ]),
  );
}

export function orderFromMessage(message: OrderMessage): Order {
  return {
    orderId: message.orderId,
    customerId: message.customerId,
    currency: message.currency,
    items: message.items.map((item) => ({ ...item })),
  };
}

/** Order total in minor units; exact because every factor is an integer well inside 2^53. */
export function orderTotalMinor(order: Order): number {
  return order.items.reduce((sum, item) => sum + item.quantity * item.unitPriceMinor, 0);
}

/**
 * Names the immutable fields in which two orders with the same id differ; empty when a repeated
 * submission is a true duplicate. Item order matters: lines are part of the order as submitted.
 */
export function orderDifferences(stored: Order, incoming: Order): string[] {
  const differences: string[] = [];
  if (stored.orderId !== incoming.orderId) differences.push("orderId");
  if (stored.customerId !== incoming.customerId) differences.push("customerId");
  if (stored.currency !== incoming.currency) differences.push("currency");
  if (stored.items.length !== incoming.items.length) differences.push("items.length");
  const shared = Math.min(stored.items.length, incoming.items.length);
  for (let i = 0; i < shared; i++) {
    const a = stored.items[i];
    const b = incoming.items[i];
    if (!a || !b) continue;
    for (const key of ["sku", "quantity", "unitPriceMinor"] as const) {
      if (a[key] !== b[key]) differences.push(`items[${i}].${key}`);
    }
  }
  return differences;
}
