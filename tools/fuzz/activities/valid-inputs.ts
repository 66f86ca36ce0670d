import fc from "fast-check";
import { agentRequestIdFor } from "../../../src/domain/agent-messages.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import type { JsonObject } from "../orders/json-object.js";
import { ACTIVITY_SHAPES, type ActivityName, type FieldRule, type Shape } from "./shapes.js";

/** The order and attempt an input is about; filled in when the run knows them. */
export interface AttemptRef {
  readonly orderId: string;
  readonly instanceId: string;
  readonly attempt: number;
}

const instant = fc
  .date({
    min: new Date("2000-01-01T00:00:00.000Z"),
    max: new Date("2100-01-01T00:00:00.000Z"),
    noInvalidDate: true,
  })
  .map((date) => date.toISOString());

/** A valid value of `field`; null now and then where it is allowed. */
function fieldValue(field: FieldRule): fc.Arbitrary<JsonValue> {
  const value = ruleValue(field);
  return field.nullable
    ? fc.oneof({ arbitrary: value, weight: 3 }, { arbitrary: fc.constant(null), weight: 1 })
    : value;
}

function ruleValue({ rule }: FieldRule): fc.Arbitrary<JsonValue> {
  switch (rule.type) {
    case "text":
      return fc.string({ minLength: rule.min, maxLength: Math.min(rule.max, 24) });
    case "int":
      return fc.integer({ min: rule.min, max: rule.max });
    case "bool":
      return fc.boolean();
    case "instant":
      return instant;
    case "oneOf":
      return fc.constantFrom(...rule.values);
    case "literal":
      return fc.constant(rule.value);
    case "object":
      return objectOf(rule.shape);
  }
}

function objectOf(shape: Shape): fc.Arbitrary<JsonValue> {
  const fields = Object.fromEntries(Object.entries(shape).map(([key, field]) => [key, fieldValue(field)]));
  const omissible = Object.keys(shape).filter((key) => shape[key]?.omissible);
  return fc.record(fields, { requiredKeys: Object.keys(shape).filter((key) => !omissible.includes(key)) });
}

/** Fields that say which order and attempt an input is about: set by `forAttempt`, not generated. */
const SET_BY_RUN: ReadonlySet<string> = new Set([
  "orderId",
  "instanceId",
  "attempt",
  "requestId",
  "idempotencyKey",
]);

/** A valid input of `activity` but for the fields `forAttempt` sets. */
export function validInput(activity: ActivityName): fc.Arbitrary<JsonObject> {
  const shape = Object.fromEntries(
    Object.entries(ACTIVITY_SHAPES[activity]).filter(([key]) => !SET_BY_RUN.has(key)),
  );
  return objectOf(shape) as fc.Arbitrary<JsonObject>;
}

/** `input` about the order and attempt of `ref`, its ids consistent with them. */
export function forAttempt(input: JsonObject, ref: AttemptRef, shape: Shape): JsonObject {
  const out: JsonObject = { orderId: ref.orderId, instanceId: ref.instanceId, ...input };
  // An activity that starts the attempt names its number beside it.
  if ("attempt" in shape) out.attempt = ref.attempt;
  if ("replyEvent" in input) {
    const step = input.step as Parameters<typeof agentRequestIdFor>[2];
    const operation = input.operation === "undo" ? "undo" : "do";
    Object.assign(out, {
      attempt: ref.attempt,
      requestId: agentRequestIdFor(ref.orderId, ref.attempt, step, operation),
      idempotencyKey: `${ref.orderId}:${step}${operation === "undo" ? ":undo" : ""}`,
    });
  }
  return out;
}
