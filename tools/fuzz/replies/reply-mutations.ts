import fc from "fast-check";
import {
  AGENT_MESSAGE_SCHEMA_VERSION,
  AGENT_OPERATIONS,
  type AgentResponse,
} from "../../../src/domain/agent-messages.js";
import { ORDER_STEPS } from "../../../src/domain/workflow.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import { notAnInstant } from "../instants.js";
import { copyJson, type JsonObject, setOwn } from "../orders/json-object.js";
import { jsonValue } from "../orders/mutations.js";

const FIELDS = [
  "schemaVersion",
  "requestId",
  "orderId",
  "attempt",
  "step",
  "operation",
  "instanceId",
  "outcome",
  "reference",
  "fault",
  "callsMade",
  "completedAt",
] as const;
type Field = (typeof FIELDS)[number];
const FAULT_FIELDS = ["kind", "code", "message"];
type NumberField = "schemaVersion" | "attempt" | "callsMade";
type WordField = "step" | "operation" | "outcome" | "fault.kind";
type TextField = "requestId" | "orderId" | "instanceId" | "reference" | "fault.code" | "fault.message";

/** One way of breaking a genuine reply: every one of them makes it invalid by the reply's contract. */
export type ReplyMutation =
  | { readonly kind: "remove"; readonly field: Field }
  | { readonly kind: "retype"; readonly field: Field; readonly value: JsonValue }
  | { readonly kind: "number"; readonly field: NumberField; readonly value: number }
  | { readonly kind: "word"; readonly field: WordField; readonly value: string }
  | { readonly kind: "length"; readonly field: TextField; readonly extra: number }
  | { readonly kind: "instant"; readonly value: string }
  | { readonly kind: "extra"; readonly inFault: boolean; readonly key: string; readonly value: JsonValue }
  /** An outcome that contradicts the fault: succeeded with one, failed without. */
  | { readonly kind: "mismatch" };

const RANGES: Record<NumberField, { min: number; max: number }> = {
  // Version 1 is upgraded on read: both it and the current one are valid.
  schemaVersion: { min: 1, max: AGENT_MESSAGE_SCHEMA_VERSION },
  attempt: { min: 1, max: 1_000_000 },
  callsMade: { min: 0, max: 1_000 },
};
const LIMITS: Record<TextField, { min: number; max: number }> = {
  requestId: { min: 1, max: 128 },
  orderId: { min: 1, max: 64 },
  instanceId: { min: 1, max: 128 },
  reference: { min: 0, max: 256 },
  "fault.code": { min: 1, max: 128 },
  "fault.message": { min: 0, max: 2_000 },
};
const WORDS: Record<WordField, readonly string[]> = {
  step: ORDER_STEPS,
  operation: AGENT_OPERATIONS,
  outcome: ["succeeded", "failed"],
  "fault.kind": ["transient", "permanent"],
};

const numberField = fc.constantFrom<NumberField>("schemaVersion", "attempt", "callsMade");
const wordField = fc.constantFrom<WordField>("step", "operation", "outcome", "fault.kind");
const textField = fc.constantFrom<TextField>(...(Object.keys(LIMITS) as TextField[]));

/** A value of another JSON type than the field's; null only where the field is not nullable. */
const otherType = (field: Field): fc.Arbitrary<JsonValue> => {
  const nullable = field === "reference" || field === "fault";
  const numeric = field === "schemaVersion" || field === "attempt" || field === "callsMade";
  return fc.oneof<fc.Arbitrary<JsonValue>[]>(
    ...(numeric ? [fc.constantFrom("1", "")] : [fc.integer()]),
    fc.boolean(),
    fc.constant([]),
    ...(field === "fault" ? [] : [fc.constant({})]),
    ...(nullable ? [] : [fc.constant(null)]),
  );
};

export const replyMutation: fc.Arbitrary<ReplyMutation> = fc.oneof(
  fc.record({ kind: fc.constant("remove" as const), field: fc.constantFrom(...FIELDS) }),
  fc
    .constantFrom(...FIELDS)
    .chain((field) =>
      fc.record({ kind: fc.constant("retype" as const), field: fc.constant(field), value: otherType(field) }),
    ),
  numberField.chain((field) =>
    fc.record({
      kind: fc.constant("number" as const),
      field: fc.constant(field),
      value: fc
        .oneof(
          fc.constantFrom(0, -1, 2, 1001, 1_000_001, 1.5, -0.5),
          fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
        )
        .filter(
          (value) => !(Number.isInteger(value) && value >= RANGES[field].min && value <= RANGES[field].max),
        ),
    }),
  ),
  wordField.chain((field) =>
    fc.record({
      kind: fc.constant("word" as const),
      field: fc.constant(field),
      value: fc
        .oneof(
          fc.constantFrom("", "Do", "UNDO", "redo", "reserveinventory", "succeed", "fatal", "ok"),
          fc.string({ maxLength: 20 }),
        )
        .filter((value) => !WORDS[field].includes(value)),
    }),
  ),
  fc.record({
    kind: fc.constant("length" as const),
    field: textField,
    extra: fc.integer({ min: 1, max: 3_000 }),
  }),
  fc.record({ kind: fc.constant("instant" as const), value: notAnInstant }),
  fc.record({
    kind: fc.constant("extra" as const),
    inFault: fc.boolean(),
    key: fc.oneof(
      fc.constantFrom("__proto__", "constructor", "toString", "_etag", "Outcome", "error"),
      fc.string({ minLength: 1, maxLength: 12 }),
    ),
    value: jsonValue(2),
  }),
  fc.constant({ kind: "mismatch" as const }),
);

/** Whether the mutation needs the reply to carry a fault (a failed outcome) to apply. */
export function needsFault(mutation: ReplyMutation): boolean {
  if (mutation.kind === "word" || mutation.kind === "length") return mutation.field.startsWith("fault.");
  return mutation.kind === "extra" && mutation.inFault;
}

/** `reply` broken as `mutation` says, with the field its dead-letter reason must name. */
export function applyReplyMutation(
  reply: AgentResponse,
  mutation: ReplyMutation,
): { body: JsonObject; field: string } {
  const body = copyJson(reply as unknown as JsonObject);
  const fault = body.fault as JsonObject | null;
  const at = (field: string): [JsonObject, string] =>
    field.startsWith("fault.") && fault ? [fault, field.slice("fault.".length)] : [body, field];
  switch (mutation.kind) {
    case "remove":
      delete body[mutation.field];
      return { body, field: mutation.field };
    case "retype":
    case "number":
    case "word":
    case "instant": {
      const field = mutation.kind === "instant" ? "completedAt" : mutation.field;
      const [target, key] = at(field);
      setOwn(target, key, mutation.value);
      return { body, field };
    }
    case "length": {
      const [target, key] = at(mutation.field);
      const limit = LIMITS[mutation.field];
      setOwn(
        target,
        key,
        limit.min > 0 && mutation.extra % 5 === 0 ? "" : "x".repeat(limit.max + mutation.extra),
      );
      return { body, field: mutation.field };
    }
    case "extra": {
      const known = mutation.inFault ? FAULT_FIELDS : (FIELDS as readonly string[]);
      const key = known.includes(mutation.key) ? `${mutation.key}_` : mutation.key;
      const target = mutation.inFault && fault ? fault : body;
      setOwn(target, key, mutation.value);
      return { body, field: target === body ? key : `fault.${key}` };
    }
    case "mismatch":
      body.fault = fault ? null : { kind: "permanent", code: "Refused", message: "" };
      return { body, field: "fault" };
  }
}
