import fc from "fast-check";
import type { OrderMessage } from "../../../src/domain/order.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import { copyJson, type JsonObject, setOwn } from "./json-object.js";
import {
  ITEM_FIELDS,
  type ItemField,
  MAX_IDENTIFIER,
  MAX_ITEMS,
  MAX_REPLY_TO,
  type NumberField,
  REQUIRED_TOP_FIELDS,
  type TextField,
  TOP_FIELDS,
  validNumber,
  validText,
} from "./spec.js";

/** One way of breaking a valid order; `item` picks a line (modulo their number) for item fields. */
export type Mutation =
  | {
      readonly kind: "remove";
      readonly field: (typeof REQUIRED_TOP_FIELDS)[number] | ItemField;
      readonly item: number;
    }
  | {
      readonly kind: "retype";
      readonly field: TextField | NumberField | "items";
      readonly item: number;
      readonly value: JsonValue;
    }
  | { readonly kind: "range"; readonly field: NumberField; readonly item: number; readonly value: number }
  | { readonly kind: "length"; readonly field: TextField; readonly item: number; readonly size: number }
  | {
      readonly kind: "chars";
      readonly field: TextField;
      readonly item: number;
      readonly at: number;
      readonly char: string;
    }
  | { readonly kind: "extra"; readonly item: number | null; readonly key: string; readonly value: JsonValue }
  | { readonly kind: "lines"; readonly count: 0 | 101 }
  | { readonly kind: "line"; readonly item: number; readonly value: JsonValue };

/** A mutated message and the field its refusal must name. */
export interface Mutated {
  readonly body: JsonObject;
  readonly field: string;
}

const ITEM_TEXT: ReadonlySet<string> = new Set(["sku"]);
const ITEM_NUMBER: ReadonlySet<string> = new Set(["quantity", "unitPriceMinor"]);
const isItemField = (field: string) => ITEM_TEXT.has(field) || ITEM_NUMBER.has(field);

const textField = fc.constantFrom<TextField>("orderId", "customerId", "currency", "replyTo", "sku");
const numberField = fc.constantFrom<NumberField>("schemaVersion", "quantity", "unitPriceMinor");
const line = fc.nat(200);

/** Any JSON value, typed as the queues carry it. */
export const jsonValue = (maxDepth: number): fc.Arbitrary<JsonValue> =>
  fc.jsonValue({ maxDepth }).map((value) => value as JsonValue);

const notAString = fc.oneof<fc.Arbitrary<JsonValue>[]>(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string(), { maxLength: 2 }),
);
const notANumber = fc.oneof<fc.Arbitrary<JsonValue>[]>(
  fc.constantFrom("1", "5", "", "1e3", "0x10"),
  fc.boolean(),
  fc.constant(null),
  fc.constant([1]),
  fc.constant({}),
);

/** Numbers outside each number field's rule: out of range, fractional, huge. */
const badNumber = (field: NumberField) =>
  fc
    .oneof(
      fc.constantFrom(0, -1, 2, 1001, 100_000_001, 1.5, 0.5, 1 + 2 ** -52, 1e21, -1e21, 2 ** 53 + 2, 5e-324),
      fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    )
    .filter((value) => !validNumber(field, value));

const forbiddenChar = fc.oneof(
  fc.constantFrom(" ", "/", "#", "$", "%", "+", ",", "'", '"', "\\", "\n", "\u0000", "\u007f"),
  fc.constantFrom("é", "ß", "Ａ", "\u200b", "\u202e", "\ufeff", "😀", "Ω", "€", "\ud800"),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
);

const TOP_KEYS: ReadonlySet<string> = new Set<string>(TOP_FIELDS);
const extraKey = fc
  .oneof(
    fc.constantFrom("__proto__", "constructor", "toString", "valueOf", "hasOwnProperty", "prototype"),
    fc.constantFrom("orderid", "OrderId", "order_id", "replyto", "_etag", "id", "items[0].sku", "é", "😀"),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 16 }),
  )
  .filter((key) => key !== "");

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant("remove" as const),
    field: fc.constantFrom(...REQUIRED_TOP_FIELDS, ...ITEM_FIELDS),
    item: line,
  }),
  fc.oneof(
    fc.record({ kind: fc.constant("retype" as const), field: textField, item: line, value: notAString }),
    fc.record({ kind: fc.constant("retype" as const), field: numberField, item: line, value: notANumber }),
    fc.record({
      kind: fc.constant("retype" as const),
      field: fc.constant("items" as const),
      item: line,
      value: fc.oneof<fc.Arbitrary<JsonValue>[]>(
        fc.string(),
        fc.integer(),
        fc.constant({}),
        fc.constant(null),
      ),
    }),
  ),
  numberField.chain((field) =>
    fc.record({
      kind: fc.constant("range" as const),
      field: fc.constant(field),
      item: line,
      value: badNumber(field),
    }),
  ),
  fc.record({
    kind: fc.constant("length" as const),
    field: textField,
    item: line,
    size: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 700 })),
  }),
  fc.record({
    kind: fc.constant("chars" as const),
    field: textField,
    item: line,
    at: fc.nat(300),
    char: forbiddenChar,
  }),
  fc.record({
    kind: fc.constant("extra" as const),
    item: fc.option(line, { nil: null }),
    key: extraKey,
    value: jsonValue(2),
  }),
  fc.record({ kind: fc.constant("lines" as const), count: fc.constantFrom(0 as const, 101 as const) }),
  fc.record({
    kind: fc.constant("line" as const),
    item: line,
    value: fc.oneof<fc.Arbitrary<JsonValue>[]>(fc.constant(null), fc.integer(), fc.string(), fc.constant([])),
  }),
);

/** Where a field lives in the message: the message itself, or one of its lines. */
interface Place {
  readonly target: JsonObject;
  readonly path: string;
}

function placeOf(body: JsonObject, field: string, item: number): Place {
  if (!isItemField(field)) return { target: body, path: field };
  const lines = body.items as JsonObject[];
  const index = item % lines.length;
  return { target: lines[index] as JsonObject, path: `items[${index}].${field}` };
}

/** `order` broken as `change` says, with the field the refusal must name. */
export function applyMutation(order: OrderMessage, change: Mutation): Mutated {
  const body = copyJson(order as unknown as JsonObject);
  switch (change.kind) {
    case "remove":
    case "retype":
    case "range": {
      const { target, path } = placeOf(body, change.field, change.item);
      if (change.kind === "remove") delete target[change.field];
      else setOwn(target, change.field, change.value);
      return { body, field: path };
    }
    case "length":
    case "chars": {
      const { target, path } = placeOf(body, change.field, change.item);
      const before = typeof target[change.field] === "string" ? (target[change.field] as string) : "A";
      setOwn(target, change.field, brokenText(change, before));
      return { body, field: path };
    }
    case "extra":
      return extraField(body, change);
    case "lines":
      body.items =
        change.count === 0
          ? []
          : Array.from(
              { length: MAX_ITEMS + 1 },
              (_, i) => ({ ...order.items[i % order.items.length] }) as JsonObject,
            );
      return { body, field: "items" };
    case "line": {
      const lines = body.items as JsonValue[];
      const index = change.item % lines.length;
      lines[index] = change.value;
      return { body, field: `items[${index}]` };
    }
  }
}

function extraField(body: JsonObject, change: Extract<Mutation, { kind: "extra" }>): Mutated {
  if (change.item === null) {
    const key = TOP_KEYS.has(change.key) ? `${change.key}_` : change.key;
    setOwn(body, key, change.value);
    return { body, field: key };
  }
  const key = isItemField(change.key) ? `${change.key}_` : change.key;
  const { target, path } = placeOf(body, "sku", change.item);
  setOwn(target, key, change.value);
  // A function, not a string: a key such as "$&" must not be read as a replacement pattern.
  return { body, field: path.replace(/\.sku$/, () => `.${key}`) };
}

/** A text of the right characters and the wrong length, or of the right length with a wrong character. */
function brokenText(change: Extract<Mutation, { kind: "length" | "chars" }>, before: string): string {
  const field = change.field;
  if (change.kind === "length") {
    const limit = field === "currency" ? 3 : field === "replyTo" ? MAX_REPLY_TO : MAX_IDENTIFIER;
    const size =
      change.size === 0 ? 0 : field === "currency" ? (change.size % 2 === 0 ? 2 : 4) : limit + change.size;
    const unit = field === "currency" ? "Q" : "a";
    return unit.repeat(size);
  }
  const at = change.at % (before.length + 1);
  const broken = before.slice(0, at) + change.char + before.slice(at + (field === "currency" ? 1 : 0));
  return validText(field, broken) ? `${broken} ` : broken;
}
