/**
 * What the partner reads back from storage, checked before it is believed: a journal event (one line of a
 * segment) and a snapshot of the books. Anything else is refused with an error naming the blob, the line
 * and the field, rather than replayed into books that would then answer wrongly.
 */
import { z } from "zod";
import { EFFECT_OPERATIONS, PARTNER_OPERATIONS, UNDO_OPERATIONS } from "../src/domain/partner-operations.js";
import { ValidationError, validate } from "../src/domain/validation.js";
import { CONTROL_CHANGES_LISTED } from "./control-contract.js";
import { LEDGER_COUNTERS, type LedgerEvent, RETIRED_COUNTERS } from "./ledger.js";
import { LEDGER_STATE_VERSION, type LedgerState } from "./ledger-state.js";

const text = z.string();
const count = z.number().int().nonnegative();
const operation = z.enum(PARTNER_OPERATIONS);
const effectOperation = z.enum(EFFECT_OPERATIONS);
const undoOperation = z.enum(UNDO_OPERATIONS);
const counter = z.enum(LEDGER_COUNTERS);
const rate = z.number().min(0).max(1);
const faultRates = z.strictObject({ transient: rate, permanent: rate, slow: rate, lostReply: rate });

const controlChange = z.strictObject({
  at: text,
  change: z.enum(["faults", "outage", "recovered"]),
  by: z.enum(["operator", "settings"]),
  faults: faultRates.exactOptional(),
  until: text.exactOptional(),
});

const ledgerEvent = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("call"), operation, key: text, orderId: text }),
  z.strictObject({ kind: z.literal("count"), counter: z.enum([...LEDGER_COUNTERS, ...RETIRED_COUNTERS]) }),
  z.strictObject({
    kind: z.literal("reject"),
    key: text,
    operation,
    orderId: text,
    target: text.nullable(),
    reason: text,
  }),
  z.strictObject({
    kind: z.literal("effect"),
    key: text,
    operation: effectOperation,
    orderId: text,
    at: text,
  }),
  z.strictObject({
    kind: z.literal("undo"),
    key: text,
    operation: undoOperation,
    orderId: text,
    effectReference: text,
  }),
  z.strictObject({ kind: z.literal("control"), change: controlChange }),
]) satisfies z.ZodType<LedgerEvent>;

/** A table as columns of equal length. */
function table<T extends Record<string, z.ZodType<unknown[]>>>(columns: T) {
  return z.strictObject(columns).check((ctx) => {
    const lengths = Object.values(ctx.value as Record<string, unknown[]>).map((column) => column.length);
    if (lengths.some((length) => length !== lengths[0])) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: `has columns of different lengths (${lengths.join(", ")})`,
      });
    }
  });
}

const counts = <K extends z.ZodType<string>>(name: K) =>
  table({ name: z.array(name), count: z.array(count) });

const ledgerState = z
  .strictObject({
    version: z.literal(LEDGER_STATE_VERSION),
    calls: count,
    undos: count,
    duplicateEffects: count,
    effects: table({
      operation: z.array(effectOperation),
      orderId: z.array(text),
      key: z.array(text),
      reference: z.array(text),
      appliedAt: z.array(text),
      undoneBy: z.array(text.nullable()),
    }),
    effectBindings: z.array(count),
    undoBindings: table({
      key: z.array(text),
      operation: z.array(undoOperation),
      orderId: z.array(text),
      effectReference: z.array(text),
      reference: z.array(text.nullable()),
    }),
    refusalBindings: table({
      key: z.array(text),
      operation: z.array(operation),
      orderId: z.array(text),
      target: z.array(text.nullable()),
      reason: z.array(text),
    }),
    keyCalls: counts(text),
    orderCalls: counts(text),
    orderRefusals: counts(text),
    nextReference: counts(operation),
    operationCounts: table({ operation: z.array(operation), calls: z.array(count), effects: z.array(count) }),
    counters: counts(counter),
    control: z.strictObject({
      recent: z.array(controlChange).max(CONTROL_CHANGES_LISTED),
      rates: faultRates.nullable(),
      window: z.strictObject({ since: text, until: text }).nullable(),
    }),
  })
  .check((ctx) => {
    const effects = ctx.value.effects.reference.length;
    const outside = ctx.value.effectBindings.findIndex((index) => index >= effects);
    if (outside >= 0) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value.effectBindings,
        path: ["effectBindings", outside],
        message: `names an effect past the ${effects} the snapshot holds`,
      });
    }
  }) satisfies z.ZodType<LedgerState>;

/**
 * One journaled event read back as text; a ValidationError names `subject` (the segment and line, say) and
 * the field.
 */
export function parseEvent(subject: string, text: string): LedgerEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(subject, [
      { field: "(event)", rule: "json", message: (error as Error).message },
    ]);
  }
  const parsed = validate(subject, ledgerEvent, value);
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

/** The books a snapshot blob holds; a ValidationError names the blob and the field. */
export function parseState(blob: string, value: unknown): LedgerState {
  const parsed = validate(blob, ledgerState, value);
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}
