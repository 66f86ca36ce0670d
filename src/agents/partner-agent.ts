import type { BreakerDecision, BreakerTicket, SharedBreaker } from "../breaker/shared-breaker.js";
import {
  AGENT_MESSAGE_SCHEMA_VERSION,
  type AgentFault,
  type AgentRequest,
  type AgentResponse,
} from "../domain/agent-messages.js";
import { type BackoffPolicy, fullJitterDelayMs, type RandomSource } from "../domain/backoff.js";
import type { BreakerOutcome } from "../domain/circuit-breaker.js";
import { isProtected } from "../domain/data-classification.js";
import { operationFor, STEP_REFERENCE_CLASSES, stepPayload } from "../domain/partner-operations.js";
import { toInstant } from "../domain/time.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { OrdersRepository } from "../ports/orders-repository.js";
import { PARTNER_KEY_HEADER } from "../ports/partner-controls.js";
import { instrumentsOf } from "../telemetry/instruments.js";
import {
  type Context,
  contextFrom,
  contextOf,
  globalTelemetry,
  SpanKind,
  SpanStatusCode,
  startSpan,
  type Telemetry,
  traceparentOf,
} from "../telemetry/telemetry.js";
import { HttpTimeoutError, postJson } from "./http-post.js";
import { recentOrders } from "./recent-orders.js";

export interface PartnerAgentDeps {
  /** Base URL of the partner service (`POST {partnerUrl}/operations/{operation}`). */
  readonly partnerUrl: string;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /** Longest a single HTTP call may take, whatever the step's deadline. */
  readonly callTimeoutMs: number;
  /** The partner's access key (PARTNER_ACCESS_KEY), sent as `x-partner-key` on every call when set. */
  readonly accessKey?: string;
  /** Where the step's span and each call's span go (default: the global providers). */
  readonly telemetry?: Telemetry;
  /**
   * The orders database, where the Agent reads what the partner needs for a step (`stepPayload`); it
   * keeps the orders it read last (`recentOrders`).
   */
  readonly orders: Pick<OrdersRepository, "get">;
  /**
   * The partner operations' circuit breakers, shared by every Agent instance: asked before each call
   * (waiting no longer than the time left), told how it ended (not waited for). Without it every call
   * goes out.
   */
  readonly breaker?: Pick<SharedBreaker, "admit" | "record">;
}

/** Where an operation's calls go, and the HTTP attributes of their spans and metrics. */
interface OperationTarget {
  readonly url: URL;
  readonly http: {
    readonly "http.request.method": "POST";
    readonly "server.address": string;
    readonly "server.port": number;
  };
}

type StepDeps = PartnerAgentDeps & {
  readonly telemetry: Telemetry;
  readonly target: (operation: string) => OperationTarget;
};

/** Each operation's target, parsed from the partner's URL on the operation's first call and kept. */
function operationTargets(partnerUrl: string): (operation: string) => OperationTarget {
  const known = new Map<string, OperationTarget>();
  return (operation) => {
    let target = known.get(operation);
    if (!target) {
      const url = new URL(`${partnerUrl}/operations/${operation}`);
      const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
      target = {
        url,
        http: { "http.request.method": "POST", "server.address": url.hostname, "server.port": port },
      };
      known.set(operation, target);
    }
    return target;
  };
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
  const orders = recentOrders(deps.orders);
  const target = operationTargets(deps.partnerUrl);
  return async (request) => {
    const telemetry = deps.telemetry ?? globalTelemetry();
    const started = deps.clock.now();
    const attributes = {
      "sas.order.id": request.orderId,
      "sas.attempt": request.attempt,
      "sas.step": request.step,
      "sas.operation": request.operation,
    };
    const span = startSpan(telemetry.tracer, `step ${request.step} ${request.operation}`, {
      kind: SpanKind.INTERNAL,
      parent: contextFrom(request.traceparent),
      attributes: { ...attributes, "sas.max_calls": request.maxCalls },
      startTime: started,
    });
    let response: AgentResponse;
    try {
      response = await runStep({ ...deps, orders, telemetry, target }, request, contextOf(span));
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      span.end(deps.clock.now());
      throw error;
    }
    const outcome = response.fault ? response.fault.kind : response.outcome;
    span.setAttributes({ "sas.outcome": outcome, "sas.calls_made": response.callsMade });
    if (response.fault) span.setStatus({ code: SpanStatusCode.ERROR, message: response.fault.code });
    const ended = deps.clock.now();
    span.end(ended);
    instrumentsOf(telemetry).stepDuration.record((ended.getTime() - started.getTime()) / 1000, {
      ...attributes,
      "sas.outcome": outcome,
    });
    return response;
  };
}

/** The step's calls: as many as the allowance and the deadline permit, each a child of `parent`. */
async function runStep(deps: StepDeps, request: AgentRequest, parent: Context): Promise<AgentResponse> {
  const operation = operationFor(request.step, request.operation);
  const deadline = Date.parse(request.completeBy);
  const log = deps.logger.child({
    orderId: request.orderId,
    attempt: request.attempt,
    step: request.step,
    operation,
    idempotencyKey: request.idempotencyKey,
  });
  const body = JSON.stringify({ orderId: request.orderId, ...(await payloadOf(deps.orders, request)) });
  let calls = 0;
  let lastFault: AgentFault = {
    kind: "transient",
    code: "DeadlinePassed",
    message: "the deadline passed before any call",
  };
  while (calls < request.maxCalls) {
    const remaining = deadline - deps.clock.now().getTime();
    if (remaining <= 0) break;
    // The breaker answers within the time left, whatever its store does (F24-2).
    const admission = deps.breaker ? await deps.breaker.admit(operation, { waitMs: remaining }) : undefined;
    if (admission?.decision === "defer") {
      log.info("agent.deferred", { callsMade: calls, breaker: admission.status, until: admission.until });
      return respond(request, deps.clock, calls, deferral(operation, admission));
    }
    // Asking the breaker took time: no call starts once the deadline has passed.
    if (deps.clock.now().getTime() >= deadline) break;
    calls++;
    // A call already under way may outlive the deadline (the seed allows work in progress to go on);
    // only new calls are refused once it has passed.
    const result = await callPartner(deps, operation, request, { call: calls, parent, body });
    // Counted at once, written without holding up the reply: a success is handed back as it came.
    if (admission) recordOutcome(deps, log, admission.ticket, breakerOutcomeOf(result));
    if (result.kind === "success") {
      // A payment's or a shipment's reference is not for the logs (partner-operations.ts).
      const loggable = isProtected(STEP_REFERENCE_CLASSES[request.step])
        ? {}
        : { reference: result.reference };
      log.info("agent.call.succeeded", { call: calls, ...loggable });
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
}

/** The breaker is open (or its one probe is out): the step waits for the next probe, nothing charged. */
function deferral(
  operation: string,
  admission: Extract<BreakerDecision, { decision: "defer" }>,
): Pick<AgentResponse, "outcome" | "reference" | "fault"> {
  const retryAt = toInstant(admission.until);
  return {
    outcome: "failed",
    reference: null,
    fault: {
      kind: "unavailable",
      code: "BreakerOpen",
      message: `the circuit breaker for ${operation} is ${admission.status} until ${retryAt}: no call made`,
      retryAt,
    },
  };
}

/** Tells the breaker how a call ended, not waiting for its store; a breaker that fails is logged. */
function recordOutcome(deps: StepDeps, log: Logger, ticket: BreakerTicket, outcome: BreakerOutcome): void {
  deps.breaker?.record(ticket, outcome).catch((error: unknown) => {
    log.warn("agent.breaker.record.failed", { outcome, error: (error as Error).message });
  });
}

function breakerOutcomeOf(result: CallResult): BreakerOutcome {
  if (result.kind === "success") return "succeeded";
  return result.fault.kind === "permanent" ? "permanent" : "transient";
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

/** One call: an HTTP client span (its `traceparent` sent along) and the call metrics. */
async function callPartner(
  deps: StepDeps,
  operation: string,
  request: AgentRequest,
  at: { readonly call: number; readonly parent: Context; readonly body: string },
): Promise<CallResult> {
  const { url, http } = deps.target(operation);
  const started = deps.clock.now();
  const span = startSpan(deps.telemetry.tracer, "POST", {
    kind: SpanKind.CLIENT,
    parent: at.parent,
    attributes: { ...http, "url.full": url.href, "sas.step": request.step, "sas.call": at.call },
    startTime: started,
  });
  const traceparent = traceparentOf(span);
  const result = await sendCall(deps, url, request, { body: at.body, traceparent });
  const status = result.status === undefined ? {} : { "http.response.status_code": result.status };
  const errorType = result.outcome.kind === "success" ? undefined : result.outcome.fault.code;
  span.setAttributes({ ...status, ...(errorType ? { "error.type": errorType } : {}) });
  if (errorType) span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
  const ended = deps.clock.now();
  span.end(ended);
  const instruments = instrumentsOf(deps.telemetry);
  const withError = errorType ? { "error.type": errorType } : {};
  instruments.httpClientDuration.record((ended.getTime() - started.getTime()) / 1000, {
    ...http,
    ...status,
    ...withError,
  });
  instruments.agentCalls.add(1, {
    "sas.step": request.step,
    "sas.operation": request.operation,
    "sas.outcome": result.outcome.kind === "success" ? "succeeded" : result.outcome.fault.kind,
    ...withError,
  });
  return result.outcome;
}

async function sendCall(
  deps: PartnerAgentDeps,
  url: URL,
  request: AgentRequest,
  { body, traceparent }: { readonly body: string; readonly traceparent: string | null },
): Promise<{ readonly outcome: CallResult; readonly status?: number }> {
  try {
    const answer = await postJson(
      url,
      {
        "idempotency-key": request.idempotencyKey,
        ...(traceparent ? { traceparent } : {}),
        ...(deps.accessKey !== undefined ? { [PARTNER_KEY_HEADER]: deps.accessKey } : {}),
      },
      body,
      { clock: deps.clock, timeoutMs: deps.callTimeoutMs },
    );
    return { outcome: classify(answer.status, answer.body), status: answer.status };
  } catch (error) {
    const timedOut = error instanceof HttpTimeoutError;
    return {
      outcome: {
        kind: "fault",
        fault: {
          kind: "transient",
          code: timedOut ? "Timeout" : "NetworkError",
          message: (error as Error).message,
        },
      },
    };
  }
}

/**
 * What the partner needs besides the order id: an undo, the reference of the effect to undo; a step,
 * its part of the order. A request whose order is missing is a broken store, not a partner's fault:
 * it throws, and the Scheduler treats it as the Agent failing.
 */
async function payloadOf(
  orders: Pick<OrdersRepository, "get">,
  request: AgentRequest,
): Promise<Record<string, unknown>> {
  if (request.operation === "undo") return { reference: request.reference };
  const order = await orders.get(request.orderId);
  if (!order) throw new Error(`order ${request.orderId} has an Agent request but no order row`);
  return stepPayload(order, request.step);
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
