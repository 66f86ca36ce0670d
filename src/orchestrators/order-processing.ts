import type { OrchestrationContext, Task } from "durable-functions";
import { AGENT_MESSAGE_SCHEMA_VERSION, type AgentRequest } from "../domain/agent-messages.js";
import type { FailureInput } from "../domain/transitions.js";
import { idempotencyKeyFor, replyEventName, requestIdFor, type StepName } from "../domain/workflow.js";

/** Function names: the orchestration and its activities, as registered and as called. */
export const ORDER_PROCESSING = "orderProcessing";
export const ACTIVITIES = {
  beginAttempt: "orderBeginAttempt",
  callAgent: "orderCallAgent",
  sendAgentRequest: "orderSendAgentRequest",
  advance: "orderAdvance",
  fail: "orderFail",
  beginCompensation: "orderBeginCompensation",
  compensateStep: "orderCompensateStep",
  finishCompensation: "orderFinishCompensation",
} as const;

/** The orchestration's input: which order, which attempt (its instance id is `${orderId}:${attempt}`). */
export interface AttemptInput {
  readonly orderId: string;
  readonly attempt: number;
}

/** Every activity that touches the record names the attempt, so the update can be fenced on it. */
export interface AttemptRef {
  readonly orderId: string;
  readonly instanceId: string;
}

/** What the attempt needs to know, read once by an activity so the orchestrator itself does no I/O. */
export type AttemptPlan =
  | { readonly owned: false }
  | {
      readonly owned: true;
      readonly pendingSteps: readonly StepName[];
      /** Partner references of the steps completed by earlier attempts, in completion order. */
      readonly completed: readonly { readonly step: StepName; readonly reference: string | null }[];
      readonly payloads: Readonly<Record<StepName, Record<string, unknown>>>;
      /** The first pending step, already started with a deadline of `firstCompleteBy`. */
      readonly firstStart: StepStart;
      readonly firstCompleteBy: string;
      readonly stepTimeoutMs: number;
      readonly agentMode: "activity" | "queue";
      /** Partner calls each undo may make (undos are not charged to the order's budget; see README). */
      readonly undoCalls: number;
    };

type OwnedPlan = Extract<AttemptPlan, { owned: true }>;

export type StepStart =
  | { readonly ok: true; readonly allowance: number }
  | {
      readonly ok: false;
      readonly reason: "notOwner" | "budgetExhausted" | "refused";
      readonly detail: string;
    };

/** A step recorded and the next one started (`next`), or the order finished when there was none. */
export type Advance =
  | { readonly ok: true; readonly next: StepStart }
  | { readonly ok: false; readonly detail: string };

export interface UpdateResult {
  readonly ok: boolean;
  readonly detail?: string;
}

/** The parts of an Agent's reply the orchestration acts on. */
interface StepReply {
  readonly outcome: "succeeded" | "failed";
  readonly reference: string | null;
  readonly fault: { readonly kind: string; readonly code: string; readonly message: string } | null;
}

export type AttemptOutcome =
  | "processed"
  | "failed"
  | "compensated"
  | "compensationFailed"
  /** The deadline passed first: the record is left for the Supervisor. */
  | "timedOut"
  /** The Agent ran out of allowance on transient faults: also left for the Supervisor. */
  | "gaveUp"
  /** The record no longer belongs to this attempt. */
  | "notOwner";

export interface AttemptResult {
  readonly outcome: AttemptOutcome;
  readonly step?: StepName;
}

/**
 * The Scheduler: one attempt at one order. Steps run in order; for each it asks the Agent and races a
 * durable timer at the step's deadline against the reply. The reply first: record the step, go on.
 * The timer first: stop and leave the record alone; it still shows the step running with an expired
 * deadline, and the Supervisor arranges the next attempt. A permanent fault fails the order, or undoes
 * the completed steps in reverse order when there are any. Deterministic: no clock, no I/O, no random.
 */
export function* orderProcessing(context: OrchestrationContext): Generator<Task, AttemptResult, unknown> {
  const input = context.df.getInput() as AttemptInput;
  const ref: AttemptRef = { orderId: input.orderId, instanceId: context.df.instanceId };
  // The first step's deadline goes with the plan: reading the plan also starts that step.
  let completeBy = deadlineAfter(context, 0);
  const plan = (yield context.df.callActivity(ACTIVITIES.beginAttempt, {
    ...ref,
    firstDeadlineFrom: completeBy,
  })) as AttemptPlan;
  if (!plan.owned) return { outcome: "notOwner" };

  const completed = [...plan.completed];
  let started = plan.firstStart;
  completeBy = plan.firstCompleteBy;
  for (const [index, step] of plan.pendingSteps.entries()) {
    if (!started.ok && started.reason !== "budgetExhausted") return { outcome: "notOwner", step };
    const reply: StepReply | undefined = started.ok
      ? yield* askAgent(context, plan, input, step, "do", completeBy, started.allowance, plan.payloads[step])
      : {
          outcome: "failed",
          reference: null,
          fault: { kind: "budget", code: "RetryBudgetExhausted", message: started.detail },
        };
    if (reply === undefined) return { outcome: "timedOut", step };
    if (reply.outcome === "succeeded") {
      // One update records this step and starts the next (or finishes the order after the last).
      const nextStep = plan.pendingSteps[index + 1];
      completeBy = deadlineAfter(context, plan.stepTimeoutMs);
      const advanced = (yield context.df.callActivity(ACTIVITIES.advance, {
        ...ref,
        step,
        reference: reply.reference,
        next: nextStep ? { step: nextStep, completeBy } : null,
      })) as Advance;
      if (!advanced.ok) return { outcome: "notOwner", step };
      completed.push({ step, reference: reply.reference });
      started = advanced.next;
      continue;
    }
    if (reply.fault?.kind === "transient") return { outcome: "gaveUp", step };
    const failure: FailureInput = {
      kind: reply.fault?.kind === "budget" ? "budget" : "permanent",
      code: reply.fault?.code ?? "Unknown",
      message: reply.fault?.message ?? "",
      step,
    };
    if (completed.length === 0) {
      yield context.df.callActivity(ACTIVITIES.fail, { ...ref, failure });
      return { outcome: "failed", step };
    }
    return yield* compensate(context, plan, input, ref, failure, completed);
  }
  if (plan.pendingSteps.length === 0)
    yield context.df.callActivity(ACTIVITIES.advance, { ...ref, step: null, next: null });
  return { outcome: "processed" };
}

function* compensate(
  context: OrchestrationContext,
  plan: OwnedPlan,
  input: AttemptInput,
  ref: AttemptRef,
  failure: FailureInput,
  completed: readonly { step: StepName; reference: string | null }[],
): Generator<Task, AttemptResult, unknown> {
  const completeBy = deadlineAfter(context, plan.stepTimeoutMs * completed.length);
  const begun = (yield context.df.callActivity(ACTIVITIES.beginCompensation, {
    ...ref,
    failure,
    completeBy,
  })) as UpdateResult;
  if (!begun.ok) return { outcome: "notOwner" };
  for (const { step, reference } of [...completed].reverse()) {
    const reply = yield* askAgent(context, plan, input, step, "undo", completeBy, plan.undoCalls, {
      reference,
    });
    if (reply === undefined) return { outcome: "timedOut", step };
    const outcome = reply.outcome === "succeeded" ? "compensated" : "failed";
    const recorded = (yield context.df.callActivity(ACTIVITIES.compensateStep, {
      ...ref,
      step,
      outcome,
      failure: reply.fault
        ? { kind: "permanent", code: reply.fault.code, message: reply.fault.message }
        : null,
    })) as UpdateResult;
    if (!recorded.ok) return { outcome: "notOwner", step };
    if (outcome === "failed") break;
  }
  const finished = (yield context.df.callActivity(ACTIVITIES.finishCompensation, ref)) as { state: string };
  return { outcome: finished.state === "Compensated" ? "compensated" : "compensationFailed" };
}

/**
 * Sends the Agent its request and waits for the reply or the deadline, whichever comes first; the
 * losing timer is cancelled. Undefined when the deadline won.
 */
function* askAgent(
  context: OrchestrationContext,
  plan: OwnedPlan,
  input: AttemptInput,
  step: StepName,
  operation: "do" | "undo",
  completeBy: string,
  maxCalls: number,
  payload: Record<string, unknown>,
): Generator<Task, StepReply | undefined, unknown> {
  const suffix = operation === "undo" ? ":undo" : "";
  const request: AgentRequest = {
    schemaVersion: AGENT_MESSAGE_SCHEMA_VERSION,
    requestId: `${requestIdFor(input.orderId, input.attempt, step)}${suffix}`,
    orderId: input.orderId,
    attempt: input.attempt,
    step,
    operation,
    idempotencyKey: `${idempotencyKeyFor(input.orderId, step)}${suffix}`,
    instanceId: context.df.instanceId,
    replyEvent: replyEventName(step, operation),
    completeBy,
    maxCalls,
    payload,
  };
  const timer = context.df.createTimer(new Date(completeBy));
  let reply: Task;
  if (plan.agentMode === "activity") {
    reply = context.df.callActivity(ACTIVITIES.callAgent, request);
  } else {
    yield context.df.callActivity(ACTIVITIES.sendAgentRequest, request);
    reply = context.df.waitForExternalEvent(request.replyEvent);
  }
  const winner = yield context.df.Task.any([reply, timer]);
  if (winner !== reply) return undefined;
  timer.cancel();
  if (reply.isFaulted) {
    // The Agent itself broke (not the partner): like no answer, left for the Supervisor to retry.
    const message = reply.result instanceof Error ? reply.result.message : String(reply.result);
    return { outcome: "failed", reference: null, fault: { kind: "transient", code: "AgentFailed", message } };
  }
  return reply.result as StepReply;
}

function deadlineAfter(context: OrchestrationContext, ms: number): string {
  return new Date(context.df.currentUtcDateTime.getTime() + ms).toISOString();
}
