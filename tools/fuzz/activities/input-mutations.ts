import fc from "fast-check";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import { notAnInstant } from "../instants.js";
import { copyJson, isJsonObject, type JsonObject, setOwn } from "../orders/json-object.js";
import { jsonValue } from "../orders/mutations.js";
import type { FieldRule, Shape } from "./shapes.js";

/**
 * One way of breaking an activity's input; `pick` chooses the field among those the break applies
 * to, and the other values say what to put there.
 */
export type InputMutation =
  | { readonly kind: "remove"; readonly pick: number }
  | { readonly kind: "retype"; readonly pick: number; readonly choice: number }
  | {
      readonly kind: "outOfRange";
      readonly pick: number;
      readonly extra: number;
      readonly word: string;
      readonly instant: string;
    }
  | { readonly kind: "extra"; readonly pick: number; readonly key: string; readonly value: JsonValue }
  | { readonly kind: "notAnObject"; readonly value: JsonValue };

export const inputMutation: fc.Arbitrary<InputMutation> = fc.oneof(
  fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("retype" as const), pick: fc.nat(), choice: fc.nat() }),
  fc.record({
    kind: fc.constant("outOfRange" as const),
    pick: fc.nat(),
    extra: fc.integer({ min: 1, max: 3_000 }),
    word: fc.oneof(fc.constantFrom("", "RESERVEINVENTORY", "undo ", "fatal"), fc.string({ maxLength: 12 })),
    instant: notAnInstant,
  }),
  fc.record({
    kind: fc.constant("extra" as const),
    pick: fc.nat(),
    key: fc.oneof(
      fc.constantFrom("__proto__", "constructor", "attempt", "colour"),
      fc.string({ minLength: 1, maxLength: 10 }),
    ),
    value: jsonValue(1),
  }),
  fc.record({
    kind: fc.constant("notAnObject" as const),
    value: fc.oneof<fc.Arbitrary<JsonValue>[]>(
      fc.constant(null),
      fc.string(),
      fc.integer(),
      fc.array(fc.integer(), { maxLength: 2 }),
    ),
  }),
);

/** A field of the input with its path and its rule, and the object it sits in. */
interface Slot {
  readonly path: string;
  readonly key: string;
  readonly holder: JsonObject;
  readonly field: FieldRule;
}

/** Every field the input holds, nested objects' fields included. */
function slotsOf(input: JsonObject, shape: Shape, prefix = ""): Slot[] {
  return Object.entries(shape).flatMap(([key, field]) => {
    if (!(key in input)) return [];
    const path = `${prefix}${key}`;
    const slot: Slot = { path, key, holder: input, field };
    const value = input[key];
    if (field.rule.type === "object" && isJsonObject(value))
      return [slot, ...slotsOf(value, field.rule.shape, `${path}.`)];
    return [slot];
  });
}

/** `input` broken as `mutation` says, with the field the refusal must name; null when nothing applies. */
export function applyInputMutation(
  input: JsonObject,
  shape: Shape,
  mutation: InputMutation,
): { input: JsonValue; field: string } | null {
  if (mutation.kind === "notAnObject") return { input: mutation.value, field: "(message)" };
  const copy = copyJson(input);
  const slots = slotsOf(copy, shape);
  const choose = (candidates: Slot[]) => candidates[mutation.pick % Math.max(1, candidates.length)];
  switch (mutation.kind) {
    case "remove": {
      const slot = choose(slots.filter((s) => !s.field.omissible));
      if (!slot) return null;
      delete slot.holder[slot.key];
      return { input: copy, field: slot.path };
    }
    case "retype": {
      const slot = choose(slots);
      if (!slot) return null;
      setOwn(slot.holder, slot.key, otherType(slot.field, mutation.choice));
      return { input: copy, field: slot.path };
    }
    case "outOfRange": {
      const slot = choose(slots.filter((s) => breakable(s.field)));
      if (!slot) return null;
      setOwn(slot.holder, slot.key, outOfRange(slot.field, mutation));
      return { input: copy, field: slot.path };
    }
    case "extra": {
      const holders = [{ path: "", holder: copy, shape }, ...objectsOf(slots)];
      const target = holders[mutation.pick % holders.length] as (typeof holders)[number];
      const key = mutation.key in target.shape ? `${mutation.key}_` : mutation.key;
      setOwn(target.holder, key, mutation.value);
      return { input: copy, field: `${target.path}${key}` };
    }
  }
}

function objectsOf(slots: readonly Slot[]) {
  return slots.flatMap((slot) => {
    const value = slot.holder[slot.key];
    return slot.field.rule.type === "object" && isJsonObject(value)
      ? [{ path: `${slot.path}.`, holder: value, shape: slot.field.rule.shape }]
      : [];
  });
}

/** A value of another JSON type than the field takes (never null where null is allowed). */
function otherType(field: FieldRule, choice: number): JsonValue {
  const type = field.rule.type;
  const candidates: JsonValue[] = [
    ...(type === "text" || type === "instant" || type === "oneOf" ? [] : ["1"]),
    ...(type === "int" || type === "literal" ? [] : [7]),
    ...(type === "bool" ? [] : [true]),
    ...(field.nullable ? [] : [null]),
    [],
    ...(type === "object" ? [] : [{}]),
  ];
  return candidates[choice % candidates.length] as JsonValue;
}

function breakable(field: FieldRule): boolean {
  return ["text", "int", "instant", "oneOf", "literal"].includes(field.rule.type);
}

function outOfRange(field: FieldRule, mutation: Extract<InputMutation, { kind: "outOfRange" }>): JsonValue {
  const rule = field.rule;
  switch (rule.type) {
    case "text":
      return rule.min > 0 && mutation.extra % 4 === 0 ? "" : "x".repeat(rule.max + mutation.extra);
    case "int":
      return [rule.min - 1, rule.max + 1, rule.min + 0.5][mutation.extra % 3] as number;
    case "literal":
      return rule.value + 1;
    case "oneOf":
      return rule.values.includes(mutation.word) ? `${mutation.word}!` : mutation.word;
    default:
      return mutation.instant;
  }
}
