import { z } from "zod";
import type { Result } from "./result.js";
import { isoInstantSchema } from "./time.js";
import { traceparentSchema } from "./trace-context.js";
import {
  integer,
  literal,
  oneOf,
  text,
  type Upgrades,
  upgradeToCurrent,
  type ValidationError,
  validateVersioned,
} from "./validation.js";
import { instanceIdFor, ORDER_STEPS, requestIdFor, type StepName } from "./workflow.js";

/**
 * Version 2: the request carries the reference of the effect to undo (`reference`) and no payload: the
 * Agent reads what the partner needs from the orders database when it calls, so the order's personal
 * and payment fields stay out of the request queue and the durable histories (data-classification.ts).
 * The steps include `notifyCustomer` (workflow version 2), which a version-1 reader does not know.
 */
export const AGENT_MESSAGE_SCHEMA_VERSION = 2;

/**
 * A version-1 request carried the partner's payload; all a version-2 one keeps of it is the reference
 * to undo. The rest is read again from the order, which does not change once accepted.
 */
export const AGENT_REQUEST_UPGRADES: Upgrades = {
  1: ({ payload, ...v1 }) => {
    const reference =
      typeof payload === "object" && payload !== null && "reference" in payload ? payload.reference : null;
    return { ...v1, schemaVersion: 2, reference: typeof reference === "string" ? reference : null };
  },
};

/** A version-1 reply differs only in its version. */
export const AGENT_RESPONSE_UPGRADES: Upgrades = {
  1: (v1) => ({ ...v1, schemaVersion: 2 }),
};

/** Partner operations: one per step, and the undo of each. */
export const AGENT_OPERATIONS = ["do", "undo"] as const;

const identifier = text(1, 128);

/**
 * What the Scheduler sends an Agent for one step: the work, the deadline after which the Agent must
 * start no new side effect, the calls it may make, and the stable key the partner deduplicates on.
 */
/** What a request and its reply both carry: which order, attempt, step and operation, for which instance. */
const stepIdentity = {
  schemaVersion: literal(AGENT_MESSAGE_SCHEMA_VERSION),
  /** `${orderId}:${attempt}:${step}` (or `...:undo`): the message id, stable across resends. */
  requestId: identifier,
  orderId: text(1, 64),
  attempt: integer(1, 1_000_000),
  step: oneOf(ORDER_STEPS),
  operation: oneOf(AGENT_OPERATIONS),
  /** The orchestration instance waiting for the reply. */
  instanceId: identifier,
};

export const agentRequestSchema = z.strictObject({
  ...stepIdentity,
  /** `${orderId}:${step}`: the same for every attempt and every retry of this step. */
  idempotencyKey: identifier,
  /** The event name the instance waits on. */
  replyEvent: identifier,
  completeBy: isoInstantSchema,
  maxCalls: integer(1, 1_000),
  /** An undo's: the partner's reference for the effect to undo (null for a step's own request). */
  reference: text(0, 256).nullable(),
  /** The attempt's trace, so the Agent's spans join the order's trace (absent when none is recorded). */
  traceparent: traceparentSchema.optional(),
});
export type AgentRequest = z.infer<typeof agentRequestSchema>;

/** An Agent request as an activity's input: a version-1 one (from an older history) is upgraded first. */
export const agentRequestInputSchema = z.preprocess(
  (input) => upgradeToCurrent(input, AGENT_MESSAGE_SCHEMA_VERSION, AGENT_REQUEST_UPGRADES),
  agentRequestSchema,
);

/**
 * `unavailable`: the partner's circuit breaker for the operation is open, so the Agent made no (more)
 * calls; the Scheduler defers the step until `retryAt`, the breaker's next probe, and charges nothing.
 */
export const AGENT_FAULT_KINDS = ["transient", "permanent", "unavailable"] as const;

const agentFaultSchema = z.strictObject({
  kind: oneOf(AGENT_FAULT_KINDS),
  code: text(1, 128),
  message: text(0, 2_000),
  retryAt: isoInstantSchema.optional(),
});
export type AgentFault = z.infer<typeof agentFaultSchema>;

/**
 * The Agent's reply. `succeeded` carries the partner's reference for the effect; `failed` carries the
 * fault, whose kind tells the Scheduler whether retrying could ever help. `callsMade` feeds the
 * retry-budget accounting and the logs.
 */
export const agentResponseSchema = z.strictObject({
  ...stepIdentity,
  outcome: oneOf(["succeeded", "failed"] as const),
  reference: text(0, 256).nullable(),
  fault: agentFaultSchema.nullable(),
  callsMade: integer(0, 1_000),
  completedAt: isoInstantSchema,
});
export type AgentResponse = z.infer<typeof agentResponseSchema>;

/** The id of one step's request in one attempt, or of its undo: the message id, and what the reply echoes. */
export function agentRequestIdFor(
  orderId: string,
  attempt: number,
  step: StepName,
  operation: (typeof AGENT_OPERATIONS)[number],
): string {
  return `${requestIdFor(orderId, attempt, step)}${operation === "undo" ? ":undo" : ""}`;
}

export function parseAgentRequest(input: unknown): Result<AgentRequest, ValidationError> {
  return validateVersioned(
    "agent request",
    agentRequestSchema,
    AGENT_MESSAGE_SCHEMA_VERSION,
    input,
    AGENT_REQUEST_UPGRADES,
  );
}

/**
 * A reply is handed to the instance it names, which acts on it as the answer to its own order's
 * step; so its ids must agree with each other, or a reply could claim one order and move another.
 */
export function parseAgentResponse(input: unknown): Result<AgentResponse, ValidationError> {
  return validateVersioned(
    "agent response",
    agentResponseSchema
      .refine((r) => (r.outcome === "failed") === (r.fault !== null), {
        error: "fault must be set exactly when outcome is failed",
        path: ["fault"],
      })
      .refine((r) => r.instanceId === instanceIdFor(r.orderId, r.attempt), {
        error: "must be the instance of the order's attempt (orderId:attempt)",
        path: ["instanceId"],
      })
      .refine((r) => r.requestId === agentRequestIdFor(r.orderId, r.attempt, r.step, r.operation), {
        error: "must be the id of the request for this order, attempt, step and operation",
        path: ["requestId"],
      }),
    AGENT_MESSAGE_SCHEMA_VERSION,
    input,
    AGENT_RESPONSE_UPGRADES,
  );
}
