import type { OrchestrationContext, Task } from "durable-functions";
import { compensationDeadline } from "../domain/deadline-rules.js";
import { validate } from "../domain/validation.js";
import { attemptInputSchema, type StepName, WORKFLOWS, type WorkflowDefinition } from "../domain/workflow.js";
import { proxyActivities } from "./activity-contract.js";
import { askAgent } from "./agent-race.js";
import { openAttempt } from "./attempt-opening.js";
import { resolveDoubt } from "./doubt-resolution.js";
import {
  type Attempt,
  type AttemptResult,
  budgetSpent,
  endedBy,
  failureOf,
  finishUndo,
  isDeadline,
  type OrderOrchestrator,
  recordStep,
  replayedNow,
  type StepReply,
  timedOut,
  UNDO_BUDGET_SPENT,
  undoFailureOf,
} from "./order-attempt.js";
import {
  type CompletedStep,
  type ForwardPlan,
  ORDER_ACTIVITIES,
  type StepRun,
  type UndoWork,
} from "./order-contracts.js";

/**
 * The orchestrator of each workflow version, by its function name. The versions share this story and
 * differ in their steps, which the plan names, and in their capabilities (domain/workflow.ts), which
 * choose the activities that tell it; docs/versioning.md says when a version needs a story of its own.
 */
export const ORDER_ORCHESTRATORS: ReadonlyMap<string, OrderOrchestrator> = new Map(
  WORKFLOWS.map((workflow) => [workflow.orchestration, (context) => orderProcessing(context, workflow)]),
);

/**
 * The Scheduler: one attempt at one order. It claims the plan; for each step it asks the Agent and
 * races a durable timer at the step's deadline (domain/deadline-rules.ts) against the reply. The reply
 * first: record the step, go on. The timer first: stop and leave the record to the Supervisor. A
 * permanent fault fails the order, or undoes the completed steps in reverse. Deterministic: no clock
 * (its `now` is the replayed time), no I/O, no random.
 */
function* orderProcessing(
  context: OrchestrationContext,
  workflow: WorkflowDefinition,
): Generator<Task, AttemptResult, unknown> {
  const parsed = validate("orchestration input", attemptInputSchema, context.df.getInput());
  if (!parsed.ok) throw parsed.error;
  const input = parsed.value;
  const activities = proxyActivities(context, ORDER_ACTIVITIES);
  const ref = { orderId: input.orderId, instanceId: context.df.instanceId };
  const begun = yield* openAttempt(context, activities, { ref, input, workflow });
  if ("outcome" in begun) return begun;
  const { plan, firstRun } = begun;
  if (!plan.owned) return { outcome: "notOwner" };
  const recordsInAgent = workflow.capabilities.recordsInAgent && plan.agentMode === "activity";
  const attempt: Attempt = { context, activities, input, ref, plan, recordsInAgent };
  if (plan.mode === "compensate") return yield* undoSteps(attempt, plan, plan.compensateBy);
  return yield* runSteps(attempt, plan, firstRun);
}

/** The attempt's steps in order, the first one already run when `firstRun` is given. */
function* runSteps(
  attempt: Attempt,
  plan: ForwardPlan,
  firstRun: StepRun | null,
): Generator<Task, AttemptResult, unknown> {
  const completed = [...plan.completed];
  let started = plan.firstStart;
  let completeBy = plan.firstCompleteBy;
  for (const [index, step] of plan.pendingSteps.entries()) {
    if (!started.ok && started.reason !== "budgetExhausted") return { outcome: "notOwner", step };
    const next = plan.pendingSteps[index + 1] ?? null;
    const reply = !started.ok
      ? budgetSpent(started.detail)
      : index === 0 && firstRun
        ? { ...firstRun.reply, advanced: firstRun.advanced }
        : yield* askAgent(attempt, {
            step,
            operation: "do",
            completeBy,
            maxCalls: started.allowance,
            reference: null,
            record: { next },
          });
    if (isDeadline(reply)) return timedOut(step, reply);
    const ended = yield* endedBy(attempt, step, reply);
    if (ended) return ended;
    if (reply.outcome !== "succeeded") return yield* stepFailed(attempt, step, reply, completed);
    const { advanced, completeBy: nextCompleteBy } = yield* recordStep(attempt, { ...reply, step, next });
    if (!advanced.ok) return { outcome: "notOwner", step };
    completeBy = nextCompleteBy ?? completeBy;
    completed.push({ step, reference: reply.reference });
    started = advanced.next;
  }
  if (plan.pendingSteps.length === 0)
    yield* attempt.activities.advance({ ...attempt.ref, step: null, next: null });
  return { outcome: "processed" };
}

/** A permanent refusal, or no budget left: the order fails, or its completed steps are undone. */
function* stepFailed(
  attempt: Attempt,
  step: StepName,
  reply: StepReply,
  completed: readonly CompletedStep[],
): Generator<Task, AttemptResult, unknown> {
  const failure = failureOf(step, reply);
  if (completed.length === 0) {
    yield* attempt.activities.fail({ ...attempt.ref, failure });
    return { outcome: "failed", step };
  }
  // Compensating: the order moves to `Compensating`, then what is applied or in doubt is undone, newest first.
  const { context, plan } = attempt;
  const completeBy = compensationDeadline(replayedNow(context), plan.stepTimeoutMs, completed.length);
  const begun = yield* attempt.activities.beginCompensation({ ...attempt.ref, failure, completeBy });
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
  if (work.allowance === 0 && work.toUndo.length > 0) return yield* finishUndo(attempt, UNDO_BUDGET_SPENT);
  for (const undo of work.toUndo) {
    const resolved = yield* resolveDoubt(attempt, undo, completeBy, work.allowance);
    if (resolved.kind === "stop") return resolved.result;
    if (resolved.kind === "notApplied") continue;
    const { step } = undo;
    const ask = { step, completeBy, maxCalls: work.allowance, reference: resolved.reference };
    const reply = yield* askAgent(attempt, { ...ask, operation: "undo" });
    if (isDeadline(reply)) return timedOut(step, reply);
    const ended = yield* endedBy(attempt, step, reply);
    if (ended) return ended;
    const outcome = reply.outcome === "succeeded" ? "compensated" : "failed";
    const failure = reply.fault ? undoFailureOf(reply.fault) : null;
    const recorded = yield* attempt.activities.compensateStep({ ...attempt.ref, step, outcome, failure });
    if (!recorded.ok) return { outcome: "notOwner", step };
    if (outcome === "failed") break;
  }
  return yield* finishUndo(attempt, null);
}
