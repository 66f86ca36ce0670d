import type { AgentRequest, AgentResponse } from "../../../src/domain/agent-messages.js";
import { instanceIdFor, requestIdFor } from "../../../src/domain/workflow.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import type { AnswerOutcome, ReplySpec } from "./reply-case.js";
import { applyReplyMutation, needsFault } from "./reply-mutations.js";

/** What must become of a reply. */
export type ReplyExpectation =
  /** A genuine answer: it may change its own order's record, and no other. */
  | { readonly kind: "genuine"; readonly request: AgentRequest; readonly outcome: AnswerOutcome }
  /** Invalid by the contract: dead-lettered, naming `field` when there is one. */
  | { readonly kind: "invalid"; readonly field: string | null }
  /** Well-formed but no answer to a waiting step: changes nothing; dead-lettered, or dropped saying why. */
  | { readonly kind: "noEffect"; readonly mustNotReach: boolean };

export interface Reply {
  readonly body: JsonValue;
  readonly expect: ReplyExpectation;
}

const COMPLETED_AT = "2026-01-01T00:00:00.000Z";

/** The Agent's reply to `request`, as the queue-form worker would send it. */
export function genuineReply(
  request: AgentRequest,
  outcome: AnswerOutcome,
  reference: string,
): AgentResponse {
  const { schemaVersion, requestId, orderId, attempt, step, operation, instanceId } = request;
  const failed = outcome !== "succeeded";
  return {
    ...{ schemaVersion, requestId, orderId, attempt, step, operation, instanceId },
    outcome: failed ? "failed" : "succeeded",
    reference: failed ? null : reference,
    fault: failed
      ? { kind: outcome, code: outcome === "permanent" ? "Refused" : "Unavailable", message: "" }
      : null,
    callsMade: 1,
    completedAt: COMPLETED_AT,
  };
}

/** A well-formed reply to `request` with another identity, its ids kept consistent with each other. */
function reidentified(
  request: AgentRequest,
  orderId: string,
  attempt: number,
  step = request.step,
  operation = request.operation,
) {
  const undo = operation === "undo" ? ":undo" : "";
  return {
    ...genuineReply(request, "succeeded", "ref"),
    orderId,
    attempt,
    step,
    operation,
    instanceId: instanceIdFor(orderId, attempt),
    requestId: `${requestIdFor(orderId, attempt, step)}${undo}`,
  };
}

/** The reply `spec` stands for, given the requests waiting (`waiting`) and the run's earlier replies. */
export function replyOf(spec: ReplySpec, waiting: readonly AgentRequest[], earlier: readonly Reply[]): Reply {
  if (spec.kind === "garbage") return { body: spec.value, expect: { kind: "invalid", field: null } };
  if (spec.kind === "repeat") {
    const repeated = earlier[spec.index % Math.max(1, earlier.length)];
    if (!repeated) return { body: null, expect: { kind: "invalid", field: null } };
    const expect = repeated.expect.kind === "genuine" ? noEffect(false) : repeated.expect;
    return { body: repeated.body, expect };
  }
  const request = waiting[spec.target % Math.max(1, waiting.length)];
  if (!request) return { body: [], expect: { kind: "invalid", field: null } };
  return replyTo(spec, request);
}

function replyTo(spec: Exclude<ReplySpec, { kind: "garbage" | "repeat" }>, request: AgentRequest): Reply {
  switch (spec.kind) {
    case "answer":
      return {
        body: json(genuineReply(request, spec.outcome, spec.reference)),
        expect: { kind: "genuine", request, outcome: spec.outcome },
      };
    case "mutated": {
      const outcome = needsFault(spec.mutation) && spec.outcome === "succeeded" ? "permanent" : spec.outcome;
      const { body, field } = applyReplyMutation(genuineReply(request, outcome, "ref"), spec.mutation);
      return { body, expect: { kind: "invalid", field } };
    }
    case "unknownOrder":
      return {
        body: json(reidentified(request, `unknown-${spec.orderId}`.slice(0, 64), request.attempt)),
        expect: noEffect(true),
      };
    case "otherAttempt":
      return {
        body: json(reidentified(request, request.orderId, request.attempt + spec.delta)),
        expect: noEffect(true),
      };
    case "otherStep": {
      const same = spec.step === request.step && spec.operation === request.operation;
      const operation = same ? (spec.operation === "do" ? "undo" : "do") : spec.operation;
      return {
        body: json(reidentified(request, request.orderId, request.attempt, spec.step, operation)),
        expect: noEffect(false),
      };
    }
    case "forged":
      return { body: json(forged(request, spec)), expect: noEffect(false) };
  }
}

function forged(request: AgentRequest, spec: Extract<ReplySpec, { kind: "forged" }>): AgentResponse {
  const reply = genuineReply(request, "succeeded", "forged");
  if (spec.field === "orderId")
    return { ...reply, orderId: spec.other === request.orderId ? `${spec.other}x`.slice(-64) : spec.other };
  if (spec.field === "attempt") return { ...reply, attempt: request.attempt + 1 + (spec.other.length % 3) };
  const requestId = spec.other === request.requestId ? `${spec.other}x` : spec.other;
  return { ...reply, requestId };
}

function noEffect(mustNotReach: boolean): ReplyExpectation {
  return { kind: "noEffect", mustNotReach };
}

function json(reply: AgentResponse): JsonValue {
  return reply as unknown as JsonValue;
}
