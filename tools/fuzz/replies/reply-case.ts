import fc from "fast-check";
import { ORDER_STEPS, type StepName } from "../../../src/domain/workflow.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import { jsonValue } from "../orders/mutations.js";
import { identifier } from "../orders/valid-orders.js";
import { type ReplyMutation, replyMutation } from "./reply-mutations.js";

export type AnswerOutcome = "succeeded" | "permanent" | "transient";

/**
 * One message on the reply queue. `target` picks one of the requests the run's orchestrations are
 * waiting on (modulo their number); replies that need none become garbage when there is none.
 */
export type ReplySpec =
  /** The Agent's genuine answer to the request. */
  | {
      readonly kind: "answer";
      readonly target: number;
      readonly outcome: AnswerOutcome;
      readonly reference: string;
    }
  /** The genuine answer broken in one field. */
  | {
      readonly kind: "mutated";
      readonly target: number;
      readonly outcome: AnswerOutcome;
      readonly mutation: ReplyMutation;
    }
  | { readonly kind: "garbage"; readonly value: JsonValue }
  /** A well-formed answer for an order nobody submitted. */
  | { readonly kind: "unknownOrder"; readonly target: number; readonly orderId: string }
  /** A well-formed answer for another attempt of the order: no such instance runs. */
  | { readonly kind: "otherAttempt"; readonly target: number; readonly delta: number }
  /** A well-formed answer for another step or operation than the one the instance waits on. */
  | {
      readonly kind: "otherStep";
      readonly target: number;
      readonly step: StepName;
      readonly operation: "do" | "undo";
    }
  /** The waiting instance's id, with an identity that does not belong to it. */
  | {
      readonly kind: "forged";
      readonly target: number;
      readonly field: "orderId" | "attempt" | "requestId";
      readonly other: string;
    }
  /** One of the run's earlier replies, sent again under a new message id. */
  | { readonly kind: "repeat"; readonly index: number };

/** How many orders a run starts, and the replies it then sends. */
export interface ReplyCase {
  readonly orders: number;
  readonly replies: readonly ReplySpec[];
}

const target = fc.nat(7);
const outcome = fc.constantFrom<AnswerOutcome>("succeeded", "succeeded", "permanent", "transient");

const replySpec: fc.Arbitrary<ReplySpec> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("answer" as const),
      target,
      outcome,
      reference: fc.string({ maxLength: 40 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("mutated" as const), target, outcome, mutation: replyMutation }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("garbage" as const), value: jsonValue(3) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("unknownOrder" as const), target, orderId: identifier }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("otherAttempt" as const),
      target,
      delta: fc.integer({ min: 1, max: 5 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("otherStep" as const),
      target,
      step: fc.constantFrom(...ORDER_STEPS),
      operation: fc.constantFrom("do" as const, "undo" as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("forged" as const),
      target,
      field: fc.constantFrom("orderId" as const, "attempt" as const, "requestId" as const),
      other: identifier,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("repeat" as const), index: fc.nat(7) }) },
);

export const replyCase: fc.Arbitrary<ReplyCase> = fc.record({
  orders: fc.integer({ min: 1, max: 2 }),
  replies: fc.array(replySpec, { minLength: 1, maxLength: 6 }),
});
