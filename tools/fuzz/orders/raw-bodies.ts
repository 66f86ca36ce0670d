import fc from "fast-check";
import type { OrderMessage } from "../../../src/domain/order.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import { isJsonObject, type JsonObject, setOwn } from "./json-object.js";
import { jsonValue } from "./mutations.js";
import { MAX_MESSAGE_BYTES, utf8Bytes } from "./spec.js";
import type { Content } from "./submission.js";

/** Bodies that are not an order message at all, or are one in an unusual form. */
export type RawBody =
  | { readonly kind: "garbage"; readonly text: string }
  | { readonly kind: "truncated"; readonly cut: number }
  | { readonly kind: "scalar"; readonly value: JsonValue }
  | { readonly kind: "doubleEncoded" }
  | { readonly kind: "textForm" }
  | { readonly kind: "huge"; readonly extraBytes: number; readonly multibyte: boolean }
  /** Arrays nested `depth` deep: the whole body, or an unknown field of the order. */
  | { readonly kind: "deep"; readonly depth: number; readonly inField: boolean }
  /** HTTP only: the order's text padded with spaces to the size limit plus `delta` bytes. */
  | { readonly kind: "padded"; readonly delta: number }
  /** HTTP only: bytes that are not UTF-8. */
  | { readonly kind: "bytes"; readonly bytes: Uint8Array };

const parses = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

const garbage = fc
  .oneof(
    fc.constantFrom(
      "",
      " ",
      "{",
      "}",
      "nul",
      "NaN",
      "Infinity",
      "undefined",
      "'x'",
      '{"a":}',
      "[1,]",
      "{'a':1}",
    ),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.string({ unit: "grapheme", maxLength: 40 }),
  )
  .filter((text) => !parses(text).ok);

/** JSON that is not an object; as a string it must not hold an object's JSON text either. */
const scalar = jsonValue(2)
  .filter((value) => !isJsonObject(value))
  .filter((value) => {
    if (typeof value !== "string") return true;
    const parsed = parses(value);
    return !parsed.ok || !isJsonObject(parsed.value);
  });

export function rawBody(options: { readonly http: boolean }): fc.Arbitrary<RawBody> {
  const shared: fc.Arbitrary<RawBody>[] = [
    fc.record({ kind: fc.constant("garbage" as const), text: garbage }),
    fc.record({ kind: fc.constant("truncated" as const), cut: fc.nat() }),
    fc.record({ kind: fc.constant("scalar" as const), value: scalar }),
    fc.constant({ kind: "doubleEncoded" as const }),
    fc.constant({ kind: "textForm" as const }),
    fc.record({
      kind: fc.constant("deep" as const),
      depth: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 2_000, max: 30_000 })),
      inField: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant("huge" as const),
      extraBytes: fc.oneof(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 1, max: 120_000 })),
      multibyte: fc.boolean(),
    }),
  ];
  if (!options.http) return fc.oneof(...shared);
  return fc.oneof(
    ...shared,
    fc.record({ kind: fc.constant("padded" as const), delta: fc.integer({ min: -2, max: 2 }) }),
    fc.record({
      kind: fc.constant("bytes" as const),
      bytes: fc
        .tuple(fc.constantFrom(0xff, 0xfe, 0xc3, 0x80), fc.uint8Array({ maxLength: 40 }))
        .map(([first, rest]) => Uint8Array.from([first, ...rest])),
    }),
  );
}

const invalid = (field: string, problem: "size" | "form" | "field") =>
  ({ valid: false, field, problem }) as const;

/** The submission of `body`, built around `order` where it needs one. */
export function rawSubmission(body: RawBody, order: OrderMessage): Content {
  const text = JSON.stringify(order);
  const label = `raw ${body.kind}`;
  switch (body.kind) {
    case "garbage":
      return {
        label,
        wire: { kind: "text", text: body.text },
        expect: invalid("(message)", "form"),
        watch: null,
      };
    case "truncated":
      return {
        label,
        wire: { kind: "text", text: text.slice(0, body.cut % text.length) },
        expect: invalid("(message)", "form"),
        watch: order.orderId,
      };
    case "scalar":
      return {
        label,
        wire: { kind: "json", value: body.value, indent: 0 },
        expect: invalid("(message)", "form"),
        watch: null,
      };
    case "doubleEncoded":
      return {
        label,
        wire: { kind: "text", text: JSON.stringify(text) },
        expect: invalid("(message)", "form"),
        watch: order.orderId,
      };
    case "textForm":
      return { label, wire: { kind: "text", text }, expect: { valid: true, order }, watch: order.orderId };
    case "huge":
      return {
        label,
        wire: { kind: "json", value: oversized(order, body), indent: 0 },
        expect: invalid("(message)", "size"),
        watch: order.orderId,
      };
    case "deep": {
      const nested = "[".repeat(body.depth) + "]".repeat(body.depth);
      const deep = body.inField ? `${text.slice(0, -1)},"nested":${nested}}` : nested;
      const expect =
        utf8Bytes(deep) > MAX_MESSAGE_BYTES
          ? invalid("(message)", "size")
          : invalid(body.inField ? "nested" : "(message)", body.inField ? "field" : "form");
      return {
        label: `${label} ${body.depth}`,
        wire: { kind: "document", text: deep },
        expect,
        watch: order.orderId,
      };
    }
    case "padded": {
      const size = MAX_MESSAGE_BYTES + body.delta;
      const padded = text + " ".repeat(size - utf8Bytes(text));
      const expect = body.delta <= 0 ? ({ valid: true, order } as const) : invalid("(message)", "size");
      return {
        label: `${label} to ${size} bytes`,
        wire: { kind: "text", text: padded },
        expect,
        watch: order.orderId,
      };
    }
    case "bytes":
      return {
        label,
        wire: { kind: "bytes", bytes: body.bytes },
        expect: invalid("(message)", "form"),
        watch: null,
      };
  }
}

/** The order with a padding field that takes its JSON text past the limit by `extraBytes`. */
function oversized(order: OrderMessage, body: Extract<RawBody, { kind: "huge" }>): JsonObject {
  const value = JSON.parse(JSON.stringify(order)) as JsonObject;
  const unit = body.multibyte ? "é" : "x";
  const base = utf8Bytes(JSON.stringify({ ...value, padding: "" }));
  const needed = MAX_MESSAGE_BYTES - base + body.extraBytes;
  setOwn(value, "padding", unit.repeat(Math.ceil(needed / utf8Bytes(unit))));
  return value;
}
