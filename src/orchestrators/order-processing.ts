import type { OrchestrationContext, Task } from "durable-functions";
import type { AgentFault, AgentRequest, AgentResponse } from "../domain/agent-messages.js";
import type { FailureInput } from "../domain/transitions.js";
import { validate } from "../domain/validation.js";
import {
  type AttemptInput,
  attemptInputSchema,
  CHAINS_STEPS_FROM,
  RECORDS_IN_AGENT_FROM,
  type StepName,
  WORKFLOWS,
} from "../domain/workflow.js";
import { type ActivityProxy, proxyActivities, scheduleActivity } from "./activity-contract.js";
import { type AgentAsk, agentRequestFor } from "./agent-request.js";
import {
  type Advance,
  type AttemptRef,
  type CompletedStep,
  type ForwardPlan,
  ORDER_ACTIVITIES,
  type OrderActivityContracts,
  type OwnedPlan,
  type StartedAttempt,
  type StepRun,
  type UndoStep,
  type UndoWork,
} from "./order-contracts.js";

/** The parts of an Agent's reply the orchestration acts on; a step refused for want of budget fails as `budget`. */
interface StepReply extends Pick<AgentResponse, "outcome" | "reference"> {
  readonly fault: {
    readonly kind: AgentFault["kind"] | "budget";
    readonly code: string;
    readonly message: string;
    /** For `unavailable`: the circuit breaker's next probe. */
    readonly retryAt?: string | undefined;
  } | null;
  readonly callsMade?: number;
  /** Workflow version 3 on, activity form: the step recorded by the Agent's own activity (`runStep`). */
  readonly advanced?: StepRun["advanced"];
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
  /** The partner's circuit breaker was open: the order waits for its next probe, nothing charged. */
  | "deferred"
  /** The record no longer belongs to this attempt. */
  | "notOwner";

export interface AttemptResult {
  readonly outcome: AttemptOutcome;
  /**
   * The step the attempt ended at. When version 4's first activity lost the race to its timer or
   * broke, the step the attempt opened with: that activity may have been running a later one, which
   * the record names.
   */
  readonly step?: StepName;
  /**
   * For `timedOut`: how long after the step's deadline the orchestration saw its timer fire. Far past
   * it, nobody was running the orchestration when the deadline came (its host was down), so the
   * Supervisor does not charge the order for it (supervisor/interruptions.ts).
   */
  readonly lateByMs?: number;
}

/** The step's deadline won the race against the Agent's reply. */
interface DeadlinePassed {
  readonly deadlinePassed: true;
  readonly lateByMs: number;
}

/** The breaker is open: the attempt ends here and the order waits for the breaker's next probe. */
function* deferStep(
  attempt: Attempt,
  step: StepName,
  reply: StepReply,
): Generator<Task, AttemptResult, unknown> {
  const deferred = yield* attempt.activities.deferStep({
    ...attempt.ref,
    step,
    until: reply.fault?.retryAt ?? deadlineAfter(attempt.context, 0),
    callsMade: reply.callsMade ?? 0,
    reason: reply.fault?.message || "the partner's circuit breaker is open",
  });
  return { outcome: deferred.ok ? "deferred" : "notOwner", step };
}

function timedOut(step: StepName, deadline: DeadlinePassed): AttemptResult {
  return { outcome: "timedOut", step, lateByMs: deadline.lateByMs };
}

function isDeadline(reply: StepReply | DeadlinePassed): reply is DeadlinePassed {
  return "deadlinePassed" in reply;
}

/** What every part of one attempt works with: the context, its activities, the order and its plan. */
interface Attempt {
  readonly context: OrchestrationContext;
  readonly activities: ActivityProxy<OrderActivityContracts>;
  readonly input: AttemptInput;
  readonly ref: AttemptRef;
  readonly plan: OwnedPlan;
  /** Whether the Agent's activity records a successful step itself (`runStep`): version 3 on. */
  readonly recordsInAgent: boolean;
}

/** An orchestrator function as `df.app.orchestration` registers it. */
export type OrderOrchestrator = (context: OrchestrationContext) => Generator<Task, AttemptResult, unknown>;

/**
 * The orchestrator of each workflow version, by its function name. The versions share the code below,
 * since they differ only in their steps, which the plan names; a version whose control flow changes
 * gets a function of its own, and the older ones keep theirs unchanged (docs/versioning.md).
 */
export const ORDER_ORCHESTRATORS: ReadonlyMap<string, OrderOrchestrator> = new Map(
  WORKFLOWS.map((workflow) => [workflow.orchestration, orderProcessingFor(workflow.version)]),
);

/** The orchestrator of one workflow version: it asks for the plan of an order pinned to that version. */
function orderProcessingFor(workflowVersion: number): OrderOrchestrator {
  return (context) => orderProcessing(context, workflowVersion);
}

/**
 * The Scheduler: one attempt at one order. Steps run in order; for each it asks the Agent and races a
 * durable timer at the step's deadline against the reply. The reply first: record the step, go on.
 * The timer first: stop and leave the record alone; it still shows the step running with an expired
 * deadline, and the Supervisor arranges the next attempt. A permanent fault fails the order, or undoes
 * the completed steps in reverse order when there are any. Version 3 on, in the Agent's activity form,
 * the Agent's activity records a step that succeeded well before its deadline, and the first step runs
 * in the activity that reads the plan (`openAttempt`); version 4 on, so do the steps after it that fit
 * inside the first step's deadline. Deterministic: no clock, no I/O, no random.
 */
function* orderProcessing(
  context: OrchestrationContext,
  workflowVersion: number,
): Generator<Task, AttemptResult, unknown> {
  const parsed = validate("orchestration input", attemptInputSchema, context.df.getInput());
  if (!parsed.ok) throw parsed.error;
  const input = parsed.value;
  const activities = proxyActivities(context, ORDER_ACTIVITIES);
  const ref: AttemptRef = { orderId: input.orderId, instanceId: context.df.instanceId };
  const begun = yield* openAttempt(context, activities, { ref, input, workflowVersion });
  if ("outcome" in begun) return begun;
  const { plan, firstRun } = begun;
  if (!plan.owned) return { outcome: "notOwner" };
  const recordsInAgent = workflowVersion >= RECORDS_IN_AGENT_FROM && plan.agentMode === "activity";
  const attempt: Attempt = { context, activities, input, ref, plan, recordsInAgent };
  if (plan.mode === "compensate") return yield* undoSteps(attempt, plan, plan.compensateBy);
  return yield* runSteps(attempt, plan, firstRun);
}

/**
 * Reads the attempt's plan, which also starts its first step. Version 3 on, given the step timeout, the
 * first step's deadline is chosen here and its timer races the activity that reads the plan, which
 * also runs that step in the Agent's activity form: no activity of its own for the plan. Version 4 on,
 * that activity runs the next steps too while each can be given this deadline with at least half a
 * step timeout to go; the plan it returns starts at the last step it ran.
 */
function* openAttempt(
  context: OrchestrationContext,
  activities: ActivityProxy<OrderActivityContracts>,
  opening: { readonly ref: AttemptRef; readonly input: AttemptInput; readonly workflowVersion: number },
): Generator<Task, StartedAttempt | AttemptResult, unknown> {
  const { ref, input, workflowVersion } = opening;
  if (
    workflowVersion < RECORDS_IN_AGENT_FROM ||
    input.stepTimeoutMs === undefined ||
    input.firstStep === undefined
  ) {
    // The first step's deadline goes with the plan: reading the plan also starts that step.
    const plan = yield* activities.beginAttempt({
      ...ref,
      firstDeadlineFrom: deadlineAfter(context, 0),
      workflowVersion,
    });
    return { plan, firstRun: null };
  }
  const firstCompleteBy = deadlineAfter(context, input.stepTimeoutMs);
  const timer = context.df.createTimer(new Date(firstCompleteBy));
  const start = scheduleActivity(context, ORDER_ACTIVITIES.startAttempt, {
    ...ref,
    attempt: input.attempt,
    ...(input.traceparent ? { traceparent: input.traceparent } : {}),
    workflowVersion,
    firstCompleteBy,
    ...(workflowVersion >= CHAINS_STEPS_FROM ? { chainSteps: true as const } : {}),
  });
  // Version 4 on, the activity may be running a later step when the timer fires: all its steps share this deadline.
  const winner = yield context.df.Task.any([start, timer]);
  const step = input.firstStep;
  if (winner !== start) return { outcome: "timedOut", step, lateByMs: lateBy(context, firstCompleteBy) };
  timer.cancel();
  // The activity broke (its Agent call, or the store): left for the Supervisor, like an Agent that broke.
  if (start.isFaulted) return { outcome: "gaveUp", step };
  return start.result;
}

/** The attempt's steps in order, the first one already run when `firstRun` is given. */
function* runSteps(
  attempt: Attempt,
  plan: ForwardPlan,
  firstRun: StepRun | null,
): Generator<Task, AttemptResult, unknown> {
  const { context, activities, ref } = attempt;
  const completed = [...plan.completed];
  let started = plan.firstStart;
  let completeBy = plan.firstCompleteBy;
  for (const [index, step] of plan.pendingSteps.entries()) {
    if (!started.ok && started.reason !== "budgetExhausted") return { outcome: "notOwner", step };
    const nextStep = plan.pendingSteps[index + 1];
    const reply: StepReply | DeadlinePassed = !started.ok
      ? {
          outcome: "failed",
          reference: null,
          fault: { kind: "budget", code: "RetryBudgetExhausted", message: started.detail },
        }
      : index === 0 && firstRun
        ? { ...firstRun.reply, advanced: firstRun.advanced }
        : yield* askAgent(attempt, {
            step,
            operation: "do",
            completeBy,
            maxCalls: started.allowance,
            reference: null,
            record: { next: nextStep ?? null },
          });
    if (isDeadline(reply)) return timedOut(step, reply);
    if (reply.fault?.kind === "unavailable") return yield* deferStep(attempt, step, reply);
    if (reply.outcome === "succeeded") {
      // One update records this step and starts the next (or finishes the order after the last).
      let advanced: Advance;
      if (reply.advanced) {
        advanced = reply.advanced;
        completeBy = reply.advanced.completeBy ?? completeBy;
      } else {
        completeBy = deadlineAfter(context, plan.stepTimeoutMs);
        advanced = yield* activities.advance({
          ...ref,
          step,
          reference: reply.reference,
          next: nextStep ? { step: nextStep, completeBy } : null,
        });
      }
      if (!advanced.ok) return { outcome: "notOwner", step };
      completed.push({ step, reference: reply.reference });
      started = advanced.next;
      continue;
    }
    if (reply.fault?.kind === "transient") return { outcome: "gaveUp", step };
    return yield* stepFailed(attempt, step, reply, completed);
  }
  if (plan.pendingSteps.length === 0) yield* activities.advance({ ...ref, step: null, next: null });
  return { outcome: "processed" };
}

/** A permanent refusal, or no budget left: the order fails, or its completed steps are undone. */
function* stepFailed(
  attempt: Attempt,
  step: StepName,
  reply: StepReply,
  completed: readonly CompletedStep[],
): Generator<Task, AttemptResult, unknown> {
  const failure: FailureInput = {
    kind: reply.fault?.kind === "budget" ? "budget" : "permanent",
    code: reply.fault?.code ?? "Unknown",
    message: reply.fault?.message ?? "",
    step,
  };
  if (completed.length === 0) {
    yield* attempt.activities.fail({ ...attempt.ref, failure });
    return { outcome: "failed", step };
  }
  return yield* compensate(attempt, failure, completed);
}

/** Moves the order to `Compensating` and undoes what is applied or in doubt, newest first. */
function* compensate(
  attempt: Attempt,
  failure: FailureInput,
  completed: readonly CompletedStep[],
): Generator<Task, AttemptResult, unknown> {
  const { activities, ref, plan } = attempt;
  const completeBy = deadlineAfter(attempt.context, plan.stepTimeoutMs * (completed.length + 1));
  const begun = yield* activities.beginCompensation({ ...ref, failure, completeBy });
  if (!begun.ok) return { outcome: "notOwner" };
  return yield* undoSteps(attempt, begun, completeBy);
}

/**
 * Undoes each step in the order given, each answered by `completeBy`. A permanent refusal ends the
 * compensation in `CompensationFailed`, and so does a budget with no calls left for it; no answer in
 * time, or transient faults past the calls allowed, leave the record to the Supervisor, which hands
 * the compensation to another attempt.
 */
function* undoSteps(
  attempt: Attempt,
  work: UndoWork,
  completeBy: string,
): Generator<Task, AttemptResult, unknown> {
  const { activities, ref } = attempt;
  if (work.allowance === 0 && work.toUndo.length > 0) {
    const failure = {
      kind: "budget",
      code: "UndoBudgetExhausted",
      message: "the order's retry budget has no calls left to undo its steps",
      step: null,
    } as const;
    const finished = yield* activities.finishCompensation({ ...ref, failure });
    return { outcome: finished.state === "Compensated" ? "compensated" : "compensationFailed" };
  }
  for (const undo of work.toUndo) {
    const resolved: Resolution = undo.redo
      ? yield* resolveDoubt(attempt, undo, completeBy, work.allowance)
      : { kind: "undo", reference: undo.reference };
    if (resolved.kind === "stop") return resolved.result;
    if (resolved.kind === "notApplied") continue;
    const { step } = undo;
    const { reference } = resolved;
    const reply = yield* askAgent(attempt, {
      step,
      operation: "undo",
      completeBy,
      maxCalls: work.allowance,
      reference,
    });
    if (isDeadline(reply)) return timedOut(step, reply);
    if (reply.fault?.kind === "unavailable") return yield* deferStep(attempt, step, reply);
    if (reply.fault?.kind === "transient") return { outcome: "gaveUp", step };
    const outcome = reply.outcome === "succeeded" ? "compensated" : "failed";
    const recorded = yield* activities.compensateStep({
      ...ref,
      step,
      outcome,
      failure: reply.fault
        ? { kind: "permanent", code: reply.fault.code, message: reply.fault.message }
        : null,
    });
    if (!recorded.ok) return { outcome: "notOwner", step };
    if (outcome === "failed") break;
  }
  const finished = yield* activities.finishCompensation({ ...ref, failure: null });
  return { outcome: finished.state === "Compensated" ? "compensated" : "compensationFailed" };
}

/** What resolving a doubt decided: undo the effect, nothing to undo, or the attempt stops here. */
type Resolution =
  | { readonly kind: "undo"; readonly reference: string | null }
  | { readonly kind: "notApplied" }
  | { readonly kind: "stop"; readonly result: AttemptResult };

/**
 * An in-doubt step is resolved before it is undone: its request is sent again with its idempotency
 * key, so the partner answers with the effect it applied (or applies it now, once), or refuses it,
 * in which case nothing was applied and there is nothing to undo.
 */
function* resolveDoubt(
  attempt: Attempt,
  undo: UndoStep,
  completeBy: string,
  maxCalls: number,
): Generator<Task, Resolution, unknown> {
  const { step } = undo;
  const reply = yield* askAgent(attempt, {
    step,
    operation: "do",
    completeBy,
    maxCalls,
    reference: null,
  });
  if (isDeadline(reply)) return { kind: "stop", result: timedOut(step, reply) };
  if (reply.fault?.kind === "unavailable")
    return { kind: "stop", result: yield* deferStep(attempt, step, reply) };
  if (reply.fault?.kind === "transient") return { kind: "stop", result: { outcome: "gaveUp", step } };
  const applied = reply.outcome === "succeeded";
  const resolved = yield* attempt.activities.resolveDoubt({
    ...attempt.ref,
    step,
    applied,
    reference: applied ? reply.reference : null,
  });
  if (!resolved.ok) return { kind: "stop", result: { outcome: "notOwner", step } };
  return applied ? { kind: "undo", reference: reply.reference } : { kind: "notApplied" };
}

interface StepAsk extends AgentAsk {
  /**
   * A forward step's, in an attempt whose Agent activity records its steps (`runStep`): the step to
   * start after this one, null after the last. Absent: the Agent only answers (`callAgent`).
   */
  readonly record?: { readonly next: StepName | null };
}

/**
 * Sends the Agent its request and waits for the reply or the deadline, whichever comes first; the
 * losing timer is cancelled. When the deadline won, how late its timer fired: `currentUtcDateTime` is
 * the replayed time of the episode that saw it, so this is deterministic.
 */
function* askAgent(attempt: Attempt, ask: StepAsk): Generator<Task, StepReply | DeadlinePassed, unknown> {
  const { context, input } = attempt;
  const request = agentRequestFor({ ...input, instanceId: context.df.instanceId }, ask);
  const timer = context.df.createTimer(new Date(ask.completeBy));
  const reply = yield* sendToAgent(attempt, request, ask.record);
  const winner = yield context.df.Task.any([reply.task, timer]);
  if (winner !== reply.task) return { deadlinePassed: true, lateByMs: lateBy(context, ask.completeBy) };
  timer.cancel();
  if (reply.task.isFaulted) {
    // The Agent itself broke (not the partner): like no answer, left for the Supervisor to retry.
    const error = reply.task.result;
    const message = error instanceof Error ? error.message : String(error);
    return { outcome: "failed", reference: null, fault: { kind: "transient", code: "AgentFailed", message } };
  }
  return reply.read();
}

/** The Agent's reply on its way: the task to race against the deadline, and how to read what it brought. */
interface PendingReply {
  readonly task: Task;
  readonly read: () => StepReply;
}

/**
 * Sends the request the Agent's way: to the activity that also records the step (`runStep`), to the
 * activity that only answers (`callAgent`), or onto the Agent's queue, the reply then raised as an event.
 */
function* sendToAgent(
  attempt: Attempt,
  request: AgentRequest,
  record: StepAsk["record"],
): Generator<Task, PendingReply, unknown> {
  const { context, plan } = attempt;
  if (attempt.recordsInAgent && record !== undefined) {
    const run = scheduleActivity(context, ORDER_ACTIVITIES.runStep, { request, next: record.next });
    return { task: run, read: () => ({ ...run.result.reply, advanced: run.result.advanced }) };
  }
  if (plan.agentMode === "activity") {
    const call = scheduleActivity(context, ORDER_ACTIVITIES.callAgent, request);
    return { task: call, read: () => call.result };
  }
  yield* attempt.activities.sendAgentRequest(request);
  const event = context.df.waitForExternalEvent(request.replyEvent);
  // The reply handler raises the Agent's response, as the activity form returns it.
  return { task: event, read: () => event.result as AgentResponse };
}

/** How long after `deadline` this episode runs: its replayed time, so deterministic. */
function lateBy(context: OrchestrationContext, deadline: string): number {
  return Math.max(0, context.df.currentUtcDateTime.getTime() - Date.parse(deadline));
}

function deadlineAfter(context: OrchestrationContext, ms: number): string {
  return new Date(context.df.currentUtcDateTime.getTime() + ms).toISOString();
}
