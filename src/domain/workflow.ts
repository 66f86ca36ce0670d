import { z } from "zod";
import { traceparentSchema } from "./trace-context.js";
import { integer, text } from "./validation.js";

/**
 * The order workflow: its steps in the order the Scheduler runs them. Changing this list changes the
 * workflow contract, so it is versioned: records carry the version they were started under.
 */
export const WORKFLOW_VERSION = 1;

export const ORDER_STEPS = ["reserveInventory", "chargePayment", "arrangeShipment"] as const;
export type StepName = (typeof ORDER_STEPS)[number];

export function isStepName(value: string): value is StepName {
  return (ORDER_STEPS as readonly string[]).includes(value);
}

/** The stable key the partner service deduplicates on: the same for every attempt and every retry. */
export function idempotencyKeyFor(orderId: string, step: StepName): string {
  return `${orderId}:${step}`;
}

/** Orchestration instance id of one attempt; also the value of `lockedBy` while that attempt owns the record. */
export function instanceIdFor(orderId: string, attempt: number): string {
  return `${orderId}:${attempt}`;
}

/** Stable message id of one step's request within one attempt (Service Bus duplicate detection key). */
export function requestIdFor(orderId: string, attempt: number, step: StepName): string {
  return `${orderId}:${attempt}:${step}`;
}

/** The event a step's reply is raised under: one name per step and operation, so a stale reply can't satisfy another wait. */
export function replyEventName(step: StepName, operation: "do" | "undo"): string {
  return `reply:${step}:${operation}`;
}

/** The input each attempt's orchestration starts with; its instance id is `instanceIdFor(orderId, attempt)`. */
export const attemptInputSchema = z.strictObject({
  orderId: text(1, 64),
  attempt: integer(1, 1_000_000),
  /** The attempt's span, started by the starter: what the orchestration hands its Agent requests. */
  traceparent: traceparentSchema.optional(),
});
export type AttemptInput = z.infer<typeof attemptInputSchema>;
