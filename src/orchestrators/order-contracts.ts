import { type ZodType, z } from "zod";
import { type AgentResponse, agentRequestInputSchema } from "../domain/agent-messages.js";
import { FAILURE_KINDS, type ProcessState } from "../domain/state-record.js";
import { isoInstantSchema } from "../domain/time.js";
import { traceparentSchema } from "../domain/trace-context.js";
import type { FailureInput } from "../domain/transition-commands.js";
import { integer, oneOf, text } from "../domain/validation.js";
import { ORDER_STEPS, type StepName, workflowOf } from "../domain/workflow.js";
import { activity } from "./activity-contract.js";

/** Workflow version 1's orchestration name (each version's is in `WORKFLOWS`). */
export const ORDER_PROCESSING = workflowOf(1).orchestration;

/** Every activity that touches the record names the attempt, so the update can be fenced on it. */
export interface AttemptRef {
  readonly orderId: string;
  readonly instanceId: string;
}

/** How a step start went: the calls it may make, or why it did not start. */
export type StepStart =
  | { readonly ok: true; readonly allowance: number }
  | {
      readonly ok: false;
      readonly reason: "notOwner" | "budgetExhausted" | "refused";
      readonly detail: string;
    };

/** What the attempt needs to know, read once by an activity so the orchestrator itself does no I/O. */
export type AttemptPlan = { readonly owned: false } | ForwardPlan | CompensationPlan;
export type OwnedPlan = ForwardPlan | CompensationPlan;

interface PlanBasics {
  readonly owned: true;
  readonly stepTimeoutMs: number;
  readonly agentMode: "activity" | "queue";
}

/** An attempt at the order's steps (`Processing`). */
export interface ForwardPlan extends PlanBasics {
  readonly mode: "forward";
  readonly pendingSteps: readonly StepName[];
  /** Partner references of the steps completed by earlier attempts, in completion order. */
  readonly completed: readonly CompletedStep[];
  /** The first pending step, already started with a deadline of `firstCompleteBy`. */
  readonly firstStart: StepStart;
  readonly firstCompleteBy: string;
}

/** An attempt at a compensation handed back by the Supervisor or requested by an operator. */
export interface CompensationPlan extends PlanBasics, UndoWork {
  readonly mode: "compensate";
  /** The attempt's deadline: every undo must be answered by then. */
  readonly compensateBy: string;
}

export interface CompletedStep {
  readonly step: StepName;
  readonly reference: string | null;
}

/** A step to undo. One in doubt is first resolved by re-sending its request (`redo`) with its idempotency key. */
export interface UndoStep extends CompletedStep {
  /**
   * Plans recorded before Agent messages v2 hold the step's payload here for an in-doubt step and null
   * otherwise; the orchestrator reads the field only for its truth, which means the same in both.
   */
  readonly redo: boolean;
}

/** What a compensation attempt undoes, and the calls granted for each partner request (0: budget spent). */
export interface UndoWork {
  /** The steps still applied or in doubt, newest first: the order they are undone in. */
  readonly toUndo: readonly UndoStep[];
  readonly allowance: number;
}

/** A compensation begun by the attempt that met a permanent fault, or why it was not. */
export type CompensationStart =
  | ({ readonly ok: true } & UndoWork)
  | { readonly ok: false; readonly detail: string };

/** A step recorded and the next one started (`next`), or the order finished when there was none. */
export type Advance =
  | { readonly ok: true; readonly next: StepStart }
  | { readonly ok: false; readonly detail: string };

/**
 * What `runStep` did: the Agent's reply and, when the step succeeded in time, the step recorded and the
 * next one started (or the order finished) in the same activity, with the deadline the next step got.
 * `advanced` is null when nothing was recorded (a fault, or the reply came after the step's deadline):
 * the orchestration then decides as after `callAgent`.
 */
export interface StepRun {
  readonly reply: AgentResponse;
  readonly advanced: (Advance & { readonly completeBy: string | null }) | null;
}

/** The plan of an attempt, and its first step's run when the activity that read the plan ran it. */
export interface StartedAttempt {
  readonly plan: AttemptPlan;
  readonly firstRun: StepRun | null;
}

export interface UpdateResult {
  readonly ok: boolean;
  readonly detail?: string;
}

/** Where a compensation ended: the record's state, or `notOwner` when the attempt lost the record. */
export interface CompensationEnd {
  readonly state: ProcessState | "notOwner";
}

const identifier = text(1, 128);
const attemptRef = { orderId: text(1, 64), instanceId: identifier };
const step = oneOf(ORDER_STEPS);
const failureInput: ZodType<FailureInput> = z.strictObject({
  kind: oneOf(FAILURE_KINDS),
  code: text(1, 128),
  message: text(0, 2_000),
  step: step.nullable().default(null),
});

/**
 * The order orchestration's activities. The orchestrator calls them through `proxyActivities`; both
 * hosts register `createOrderActivities` against them, which validates each input on arrival.
 */
export const ORDER_ACTIVITIES = {
  /**
   * Reads the record and the order, and starts the first pending step. `workflowVersion` is the
   * version of the orchestration asking; absent in histories recorded before versions were named: 1.
   */
  beginAttempt: activity<AttemptPlan>()(
    "orderBeginAttempt",
    z.strictObject({
      ...attemptRef,
      firstDeadlineFrom: isoInstantSchema,
      workflowVersion: integer(1, 1_000).default(1),
    }),
  ),
  /**
   * Workflow version 3 on: `beginAttempt` with the first step's deadline chosen by the orchestration,
   * and in the Agent's activity form the first step run and recorded too (`runStep`), so an attempt of
   * n steps costs n activities. Version 4 on (`chainSteps`): the next steps too, while they fit inside
   * that deadline, so an attempt whose steps all do costs one.
   */
  startAttempt: activity<StartedAttempt>()(
    "orderStartAttempt",
    z.strictObject({
      ...attemptRef,
      attempt: integer(1, 1_000_000),
      traceparent: traceparentSchema.optional(),
      workflowVersion: integer(1, 1_000),
      firstCompleteBy: isoInstantSchema,
      chainSteps: z.literal(true).optional(),
    }),
  ),
  /**
   * The Agent in its activity form: calls the partner and answers with its reply. Histories recorded
   * before Agent messages version 2 hold version-1 requests as this input and the next: upgraded on
   * arrival, like a message.
   */
  callAgent: activity<AgentResponse>()("orderCallAgent", agentRequestInputSchema),
  /**
   * The Agent in its activity form, and the step's outcome recorded by the same activity (workflow
   * version 3 on): one activity and one orchestration episode per step instead of two.
   */
  runStep: activity<StepRun>()(
    "orderRunStep",
    z.strictObject({ request: agentRequestInputSchema, next: step.nullable() }),
  ),
  /** The Agent in its queue form: puts the request on the Agent's request queue. */
  sendAgentRequest: activity<void>()("orderSendAgentRequest", agentRequestInputSchema),
  /** Records a completed step and starts the next one, or finishes the order after the last. */
  advance: activity<Advance>()(
    "orderAdvance",
    z.strictObject({
      ...attemptRef,
      step: step.nullable(),
      reference: text(0, 256).nullable().optional(),
      next: z.strictObject({ step, completeBy: isoInstantSchema }).nullable(),
    }),
  ),
  fail: activity<UpdateResult>()("orderFail", z.strictObject({ ...attemptRef, failure: failureInput })),
  /**
   * The partner's circuit breaker for the step's operation is open: ends the attempt and lets the order
   * wait until the breaker's next probe (`until`), with nothing charged (forward-transitions.ts, `defer`).
   */
  deferStep: activity<UpdateResult>()(
    "orderDeferStep",
    z.strictObject({
      ...attemptRef,
      step,
      until: isoInstantSchema,
      callsMade: integer(0, 1_000),
      reason: text(1, 2_000),
    }),
  ),
  beginCompensation: activity<CompensationStart>()(
    "orderBeginCompensation",
    z.strictObject({ ...attemptRef, failure: failureInput, completeBy: isoInstantSchema }),
  ),
  /** Records how re-sending an in-doubt step's request went: applied (with its reference) or refused. */
  resolveDoubt: activity<UpdateResult>()(
    "orderResolveDoubt",
    z.strictObject({ ...attemptRef, step, applied: z.boolean(), reference: text(0, 256).nullable() }),
  ),
  compensateStep: activity<UpdateResult>()(
    "orderCompensateStep",
    z.strictObject({
      ...attemptRef,
      step,
      outcome: oneOf(["compensated", "failed"] as const),
      failure: failureInput.nullable(),
    }),
  ),
  /** Names the end state; `failure` ends a compensation that cannot go on (its budget is spent). */
  finishCompensation: activity<CompensationEnd>()(
    "orderFinishCompensation",
    z.strictObject({ ...attemptRef, failure: failureInput.nullable().default(null) }),
  ),
} as const;

export type OrderActivityContracts = typeof ORDER_ACTIVITIES;
