import {
  AGENT_MESSAGE_SCHEMA_VERSION,
  type AgentFault,
  type AgentRequest,
  type AgentResponse,
} from "../domain/agent-messages.js";
import { type BackoffPolicy, fullJitterDelayMs, type RandomSource } from "../domain/backoff.js";
import { toInstant } from "../domain/time.js";
import type { StepName } from "../domain/workflow.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import { HttpTimeoutError, postJson } from "./http-post.js";

/** The partner operation behind each step, and the one that undoes it. */
export const PARTNER_OPERATIONS: Readonly<Record<StepName, { readonly do: string; readonly undo: string }>> =
  {
    reserveInventory: { do: "reserveInventory", undo: "releaseInventory" },
    chargePayment: { do: "chargePayment", undo: "refundPayment" },
    arrangeShipment: { do: "arrangeShipment", undo: "cancelShipment" },
  };

export interface PartnerAgentDeps {
  /** Base URL of the partner service (`POST {partnerUrl}/operations/{operation}`). */
  readonly partnerUrl: string;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /** Longest a single HTTP call may take, whatever the step's deadline. */
  readonly callTimeoutMs: number;
}

type CallResult =
  | { readonly kind: "success"; readonly reference: string | null }
  | { readonly kind: "fault"; readonly fault: AgentFault };

/**
 * The Agent for the partner service. It calls one operation with the request's stable idempotency key
 * on every try, retries transient faults with jittered backoff only while both the allowance and the
 * deadline last, starts no call once the deadline has passed, and reports, without ever trying to
 * recover the workflow itself: that is the Scheduler's and the Supervisor's job.
 */
export function createPartnerAgent(
  deps: PartnerAgentDeps,
): (request: AgentRequest) => Promise<AgentResponse> {
  return async (request) => {
    const operation = PARTNER_OPERATIONS[request.step][request.operation];
    const deadline = Date.parse(request.completeBy);
    const log = deps.logger.child({
      orderId: request.orderId,
      attempt: request.attempt,
      step: request.step,
      operation,
      idempotencyKey: request.idempotencyKey,
    });
    let calls = 0;
    let lastFault: AgentFault = {
      kind: "transient",
      code: "DeadlinePassed",
      message: "the deadline passed before any call",
    };
    while (calls < request.maxCalls) {
      const remaining = deadline - deps.clock.now().getTime();
      if (remaining <= 0) break;
      calls++;
      // A call already under way may outlive the deadline (the seed allows work in progress to go on);
      // only new calls are refused once it has passed.
      const result = await callPartner(deps, operation, request, deps.callTimeoutMs);
      if (result.kind === "success") {
        log.info("agent.call.succeeded", { call: calls, reference: result.reference });
        return respond(request, deps.clock, calls, {
          outcome: "succeeded",
          reference: result.reference,
          fault: null,
        });
      }
      lastFault = result.fault;
      log.warn("agent.call.failed", { call: calls, fault: result.fault.kind, code: result.fault.code });
      if (result.fault.kind === "permanent") break;
      if (calls >= request.maxCalls) break;
      const delay = fullJitterDelayMs(deps.backoff, calls, deps.random);
      if (deps.clock.now().getTime() + delay >= deadline) break;
      await deps.clock.sleep(delay);
    }
    if (lastFault.kind === "transient") {
      lastFault = {
        ...lastFault,
        message: `${lastFault.message} (gave up after ${calls} of ${request.maxCalls} calls allowed before ${request.completeBy})`,
      };
    }
    return respond(request, deps.clock, calls, { outcome: "failed", reference: null, fault: lastFault });
  };
}

function respond(
  request: AgentRequest,
  clock: Clock,
  callsMade: number,
  result: Pick<AgentResponse, "outcome" | "reference" | "fault">,
): AgentResponse {
  return {
    schemaVersion: AGENT_MESSAGE_SCHEMA_VERSION,
    requestId: request.requestId,
    orderId: request.orderId,
    attempt: request.attempt,
    step: request.step,
    operation: request.operation,
    instanceId: request.instanceId,
    ...result,
    callsMade,
    completedAt: toInstant(clock.now()),
  };
}

async function callPartner(
  deps: PartnerAgentDeps,
  operation: string,
  request: AgentRequest,
  timeoutMs: number,
): Promise<CallResult> {
  try {
    const answer = await postJson(
      new URL(`${deps.partnerUrl}/operations/${operation}`),
      { "idempotency-key": request.idempotencyKey },
      JSON.stringify({ orderId: request.orderId, ...request.payload }),
      { clock: deps.clock, timeoutMs },
    );
    return classify(answer.status, answer.body);
  } catch (error) {
    const timedOut = error instanceof HttpTimeoutError;
    return {
      kind: "fault",
      fault: {
        kind: "transient",
        code: timedOut ? "Timeout" : "NetworkError",
        message: (error as Error).message,
      },
    };
  }
}

/** Timeouts, 408, 429 and 5xx may pass; any other 4xx will not, however often it is retried. */
export function classify(status: number, body: string): CallResult {
  if (status >= 200 && status < 300) {
    const parsed = safeJson(body);
    const reference = typeof parsed?.reference === "string" ? parsed.reference : null;
    return { kind: "success", reference };
  }
  const parsed = safeJson(body);
  const detail =
    typeof parsed?.reason === "string"
      ? parsed.reason
      : typeof parsed?.error === "string"
        ? parsed.error
        : body.slice(0, 200);
  const transient = status === 408 || status === 429 || status >= 500;
  return {
    kind: "fault",
    fault: {
      kind: transient ? "transient" : "permanent",
      code: `Http${status}`,
      message: detail || `HTTP ${status}`,
    },
  };
}

function safeJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
