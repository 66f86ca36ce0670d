import {
  AGENT_MESSAGE_SCHEMA_VERSION,
  type AgentRequest,
  agentRequestIdFor,
} from "../domain/agent-messages.js";
import { idempotencyKeyFor, replyEventName, type StepName } from "../domain/workflow.js";

/** Which attempt asks: the order, the attempt's number and orchestration, and the trace it joins. */
export interface Asker {
  readonly orderId: string;
  readonly attempt: number;
  readonly instanceId: string;
  readonly traceparent?: string | undefined;
}

/** One request to the Agent: a step to do or undo, answered by `completeBy`. */
export interface AgentAsk {
  readonly step: StepName;
  readonly operation: "do" | "undo";
  readonly completeBy: string;
  readonly maxCalls: number;
  /** An undo's: the effect to undo. */
  readonly reference: string | null;
}

/**
 * The Agent's request for one step of one attempt. Built from the attempt alone, never the clock, so the
 * orchestration builds the same one on every replay, and an activity that starts the attempt builds it
 * as the orchestration would.
 */
export function agentRequestFor(asker: Asker, ask: AgentAsk): AgentRequest {
  const suffix = ask.operation === "undo" ? ":undo" : "";
  return {
    schemaVersion: AGENT_MESSAGE_SCHEMA_VERSION,
    requestId: agentRequestIdFor(asker.orderId, asker.attempt, ask.step, ask.operation),
    orderId: asker.orderId,
    attempt: asker.attempt,
    step: ask.step,
    operation: ask.operation,
    idempotencyKey: `${idempotencyKeyFor(asker.orderId, ask.step)}${suffix}`,
    instanceId: asker.instanceId,
    replyEvent: replyEventName(ask.step, ask.operation),
    completeBy: ask.completeBy,
    maxCalls: ask.maxCalls,
    reference: ask.reference,
    // Data from the input, never a span: the orchestrator creates no telemetry of its own on replay.
    ...(asker.traceparent ? { traceparent: asker.traceparent } : {}),
  };
}
