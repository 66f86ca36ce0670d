import type { OrchestrationContext, Task } from "durable-functions";
import type { AgentFault, AgentResponse } from "../domain/agent-messages.js";
import { stepDeadline } from "../domain/deadline-rules.js";
import type { IsoInstant } from "../domain/time.js";
import type { FailureInput } from "../domain/transition-commands.js";
import type { AttemptInput, StepName } from "../domain/workflow.js";
import type { ActivityProxy } from "./activity-contract.js";
import type { Advance, AttemptRef, OrderActivityContracts, OwnedPlan, StepRun } from "./order-contracts.js";

// What one attempt's orchestration works with, the pieces its story (order-processing.ts) is told in.

/** What every part of one attempt works with: the context, its activities, the order and its plan. */
export interface Attempt {
  readonly context: OrchestrationContext;
  readonly activities: ActivityProxy<OrderActivityContracts>;
  readonly input: AttemptInput;
  readonly ref: AttemptRef;
  readonly plan: OwnedPlan;
  /** Whether the Agent's activity records a successful step itself (`runStep`): its workflow's `recordsInAgent`. */
  readonly recordsInAgent: boolean;
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
   * The step the attempt ended at. When a chaining workflow's first activity lost the race to its
   * timer or broke, the step the attempt opened with: that activity may have been running a later
   * one, which the record names.
   */
  readonly step?: StepName;
  /**
   * For `timedOut`: how long after the step's deadline the orchestration saw its timer fire. Far past
   * it, nobody was running the orchestration when the deadline came (its host was down), so the
   * Supervisor does not charge the order for it (supervisor/interruptions.ts).
   */
  readonly lateByMs?: number;
}

/** The parts of an Agent's reply the orchestration acts on; a step refused for want of budget fails as `budget`. */
export interface StepReply extends Pick<AgentResponse, "outcome" | "reference"> {
  readonly fault: {
    readonly kind: AgentFault["kind"] | "budget";
    readonly code: string;
    readonly message: string;
    /** For `unavailable`: the circuit breaker's next probe. */
    readonly retryAt?: string | undefined;
  } | null;
  readonly callsMade?: number;
  /** A `recordsInAgent` workflow's, activity form: the step recorded by the Agent's own activity (`runStep`). */
  readonly advanced?: StepRun["advanced"];
}

/** The step's deadline won the race against the Agent's reply. */
export interface DeadlinePassed {
  readonly deadlinePassed: true;
  readonly lateByMs: number;
}

export function isDeadline(reply: StepReply | DeadlinePassed): reply is DeadlinePassed {
  return "deadlinePassed" in reply;
}

export function timedOut(step: StepName, deadline: DeadlinePassed): AttemptResult {
  return { outcome: "timedOut", step, lateByMs: deadline.lateByMs };
}

/** The orchestration's replayed time: the `now` it hands the deadline rules, deterministic on replay. */
export function replayedNow(context: OrchestrationContext): IsoInstant {
  return context.df.currentUtcDateTime.toISOString();
}

/** The breaker is open: the attempt ends here and the order waits for the breaker's next probe. */
export function* deferStep(
  attempt: Attempt,
  step: StepName,
  reply: StepReply,
): Generator<Task, AttemptResult, unknown> {
  const deferred = yield* attempt.activities.deferStep({
    ...attempt.ref,
    step,
    until: reply.fault?.retryAt ?? replayedNow(attempt.context),
    callsMade: reply.callsMade ?? 0,
    reason: reply.fault?.message || "the partner's circuit breaker is open",
  });
  return { outcome: deferred.ok ? "deferred" : "notOwner", step };
}

/** A reply that ends the attempt before anything is recorded: an open breaker, or transient faults past the calls allowed. */
export function* endedBy(
  attempt: Attempt,
  step: StepName,
  reply: StepReply,
): Generator<Task, AttemptResult | null, unknown> {
  if (reply.fault?.kind === "unavailable") return yield* deferStep(attempt, step, reply);
  if (reply.fault?.kind === "transient") return { outcome: "gaveUp", step };
  return null;
}

/** Ends the compensation, with `failure` when it cannot go on; the record names the end state. */
export function* finishUndo(
  attempt: Attempt,
  failure: FailureInput | null,
): Generator<Task, AttemptResult, unknown> {
  const finished = yield* attempt.activities.finishCompensation({ ...attempt.ref, failure });
  return { outcome: finished.state === "Compensated" ? "compensated" : "compensationFailed" };
}

/** An orchestrator function as `df.app.orchestration` registers it. */
export type OrderOrchestrator = (context: OrchestrationContext) => Generator<Task, AttemptResult, unknown>;

/** A step that succeeded, to record: by the Agent's activity already (`advanced`), or by `advance` now. */
export interface StepToRecord {
  readonly step: StepName;
  readonly reference: string | null;
  readonly advanced?: StepRun["advanced"] | undefined;
  readonly next: StepName | null;
}

/**
 * One update records the step and starts the next (or finishes the order after the last); the next
 * step's deadline is the one the record holds, or none when the record was not updated.
 */
export function* recordStep(
  attempt: Attempt,
  done: StepToRecord,
): Generator<Task, { readonly advanced: Advance; readonly completeBy: string | null }, unknown> {
  if (done.advanced) return { advanced: done.advanced, completeBy: done.advanced.completeBy };
  const completeBy = stepDeadline(replayedNow(attempt.context), attempt.plan.stepTimeoutMs);
  const advanced = yield* attempt.activities.advance({
    ...attempt.ref,
    step: done.step,
    reference: done.reference,
    next: done.next ? { step: done.next, completeBy } : null,
  });
  return { advanced, completeBy };
}

/** A step the budget refused to start: failed as `budget`, the order's calls spent. */
export function budgetSpent(detail: string): StepReply {
  return {
    outcome: "failed",
    reference: null,
    fault: { kind: "budget", code: "RetryBudgetExhausted", message: detail },
  };
}

/** Ends a compensation whose budget has no calls left for its undos. */
export const UNDO_BUDGET_SPENT: FailureInput = {
  kind: "budget",
  code: "UndoBudgetExhausted",
  message: "the order's retry budget has no calls left to undo its steps",
  step: null,
};

/** Why a step failed, as the record keeps it: a permanent refusal, or `budget` when none was left. */
export function failureOf(step: StepName, reply: StepReply): FailureInput {
  const kind = reply.fault?.kind === "budget" ? "budget" : "permanent";
  return { kind, code: reply.fault?.code ?? "Unknown", message: reply.fault?.message ?? "", step };
}

/** Why an undo failed, as the record keeps it: the partner refused it. */
export function undoFailureOf(fault: NonNullable<StepReply["fault"]>): FailureInput {
  return { kind: "permanent", code: fault.code, message: fault.message };
}
