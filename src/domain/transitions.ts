import { type BackoffPolicy, fullJitterDelayMs, type RandomSource } from "./backoff.js";
import { attemptDeadline, hasPassed, pastLongestDeferral } from "./deadline-rules.js";
import { type HistoryEntry, historyWith } from "./record-history.js";
import { err, ok, type Result } from "./result.js";
import { grantAllowance, remainingCalls } from "./retry-budget.js";
import {
  type CompensationEntry,
  type Failure,
  type FailureKind,
  PARTNER_UNAVAILABLE,
  type ProcessState,
  type StateRecord,
  type StepState,
  type StepStatus,
} from "./state-record.js";
import { addMilliseconds, type IsoInstant } from "./time.js";
import { idempotencyKeyFor, instanceIdFor, type StepName } from "./workflow.js";

export const ACTORS = ["submission", "starter", "orchestration", "supervisor", "operator"] as const;
export type Actor = (typeof ACTORS)[number];

/**
 * Whose write a transition is, checked against the record as read:
 * - `unlocked`: nobody owns the record (`lockedBy` is null);
 * - `owner`: the caller's orchestration instance owns it (`lockedBy` equals its instance id);
 * - `expiredOwner`: the owner the Supervisor saw still owns it, and its `completeBy` has passed.
 */
export type Fence = "unlocked" | "owner" | "expiredOwner";

export interface FailureInput {
  readonly kind: FailureKind;
  readonly code: string;
  readonly message: string;
  readonly step?: StepName | null;
}

/** When the Supervisor gives up on an attempt, and how long the order then waits before the next. */
export interface RecoveryPolicy {
  /** Recoveries allowed; the one after that sends the record to `Error`. */
  readonly maxRecoveries: number;
  readonly backoff: BackoffPolicy;
  /** Past this many failures, wait `extendedDelayMs` instead, in case a longer fault clears meanwhile. */
  readonly extendedBackoffAfter: number;
  readonly extendedDelayMs: number;
  /**
   * What happens to an order past `maxRecoveries`: `error` parks it in `Error` for an operator (the
   * pattern's default); `compensate` hands its completed and in-doubt steps to a compensation instead.
   */
  readonly onExhausted: "error" | "compensate";
  /**
   * Interruptions by the host an order may be spared (deadlines given again, recoveries not charged);
   * past it they are charged like any expired attempt. Default `DEFAULT_MAX_HOST_INTERRUPTIONS`.
   */
  readonly maxHostInterruptions?: number;
}

export const DEFAULT_MAX_HOST_INTERRUPTIONS = 10;

function hostInterruptionsAllowed(record: StateRecord, policy: RecoveryPolicy): boolean {
  return record.hostInterruptions < (policy.maxHostInterruptions ?? DEFAULT_MAX_HOST_INTERRUPTIONS);
}

/** Calls asked for each partner request of a compensation attempt, charged like forward calls. */
export interface UndoGrantRequest {
  readonly callsPerRequest: number;
  /** Worst-case partner calls per granted call below the Scheduler (see retry-budget.ts). */
  readonly amplification: number;
}

export type Command =
  | { readonly type: "claim"; readonly now: IsoInstant; readonly attemptTimeoutMs: number }
  | {
      /** The starter gives back a claim whose orchestration it could not start: no failure is counted. */
      readonly type: "releaseClaim";
      readonly instanceId: string;
      readonly now: IsoInstant;
      readonly retryAt: IsoInstant;
      readonly reason: string;
    }
  | {
      readonly type: "startStep";
      readonly instanceId: string;
      readonly step: StepName;
      readonly now: IsoInstant;
      readonly completeBy: IsoInstant;
      readonly requestedCalls: number;
      /** Worst-case partner calls per granted call below the Scheduler (see retry-budget.ts). */
      readonly amplification: number;
    }
  | {
      readonly type: "completeStep";
      readonly instanceId: string;
      readonly step: StepName;
      readonly now: IsoInstant;
      readonly reference: string | null;
    }
  | { readonly type: "finish"; readonly instanceId: string; readonly now: IsoInstant }
  | {
      readonly type: "fail";
      readonly instanceId: string;
      readonly now: IsoInstant;
      readonly failure: FailureInput;
    }
  | {
      readonly type: "beginCompensation";
      readonly instanceId: string;
      readonly now: IsoInstant;
      readonly completeBy: IsoInstant;
      readonly failure: FailureInput;
      readonly undo: UndoGrantRequest;
    }
  | {
      /** A compensation attempt (handed back, or asked for by an operator) is granted its calls. */
      readonly type: "resumeCompensation";
      readonly instanceId: string;
      readonly now: IsoInstant;
      readonly undo: UndoGrantRequest;
    }
  | {
      /**
       * The partner's circuit breaker for the step's operation is open: the attempt ends, the order waits
       * until the breaker's next probe, and nothing is charged to it (no failure, no recovery, the calls
       * it was granted and did not make given back). Not for ever: an order whose run of deferrals would
       * last past `maxDeferralMs` is parked for an operator instead (F24-4).
       */
      readonly type: "defer";
      readonly instanceId: string;
      readonly step: StepName;
      readonly now: IsoInstant;
      readonly until: IsoInstant;
      /** Partner calls the Agent made for the step before it found the breaker open. */
      readonly callsMade: number;
      /** As granted: worst-case partner calls per granted call below the Scheduler. */
      readonly amplification: number;
      readonly reason: string;
      /** The longest one run of deferrals may last (MAX_DEFERRAL_MS), counted from `deferredSince`. */
      readonly maxDeferralMs: number;
    }
  | {
      /** The outcome of re-sending an in-doubt step's request with its idempotency key, before undoing it. */
      readonly type: "resolveDoubt";
      readonly instanceId: string;
      readonly step: StepName;
      readonly now: IsoInstant;
      readonly applied: boolean;
      readonly reference: string | null;
    }
  | {
      readonly type: "compensateStep";
      readonly instanceId: string;
      readonly step: StepName;
      readonly now: IsoInstant;
      readonly outcome: "compensated" | "failed";
      readonly failure?: FailureInput;
    }
  | {
      readonly type: "finishCompensation";
      readonly instanceId: string;
      readonly now: IsoInstant;
      /** Ends a compensation that cannot go on (its budget is spent) in `CompensationFailed`. */
      readonly failure?: FailureInput;
    }
  | {
      readonly type: "recover";
      readonly expectedLockedBy: string;
      readonly now: IsoInstant;
      readonly policy: RecoveryPolicy;
      readonly random: RandomSource;
      /**
       * Why the host, not the order, let the deadline pass (its orchestration's timer fired long after
       * it): the order is recovered as usual, its running steps in doubt, but no failure is counted,
       * while `maxHostInterruptions` allows.
       */
      readonly interruption?: string;
    }
  | {
      /**
       * The attempt's orchestration is still running past the deadline (its host was down, or is
       * catching up): it gets until `completeBy` to finish or time its step out itself, while
       * `maxHostInterruptions` allows.
       */
      readonly type: "extendDeadline";
      readonly expectedLockedBy: string;
      readonly now: IsoInstant;
      readonly completeBy: IsoInstant;
      readonly reason: string;
      readonly policy: RecoveryPolicy;
    }
  | { readonly type: "resubmit"; readonly now: IsoInstant; readonly reason: string }
  | { readonly type: "compensate"; readonly now: IsoInstant; readonly reason: string };

export type CommandType = Command["type"];

export interface TransitionRule {
  readonly command: CommandType;
  readonly actor: Actor;
  readonly from: ProcessState;
  readonly to: readonly ProcessState[];
  readonly fence: Fence;
}

/**
 * Every move a record can make, and who may make it. Submission only creates records (`Pending`, see
 * `newPendingRecord`); anything not listed here is refused.
 */
export const TRANSITIONS: readonly TransitionRule[] = [
  { command: "claim", actor: "starter", from: "Pending", to: ["Processing"], fence: "unlocked" },
  { command: "claim", actor: "starter", from: "Compensating", to: ["Compensating"], fence: "unlocked" },
  { command: "releaseClaim", actor: "starter", from: "Processing", to: ["Pending"], fence: "owner" },
  { command: "startStep", actor: "orchestration", from: "Processing", to: ["Processing"], fence: "owner" },
  { command: "completeStep", actor: "orchestration", from: "Processing", to: ["Processing"], fence: "owner" },
  { command: "finish", actor: "orchestration", from: "Processing", to: ["Processed"], fence: "owner" },
  { command: "fail", actor: "orchestration", from: "Processing", to: ["Error"], fence: "owner" },
  { command: "defer", actor: "orchestration", from: "Processing", to: ["Pending", "Error"], fence: "owner" },
  {
    command: "defer",
    actor: "orchestration",
    from: "Compensating",
    to: ["Compensating", "CompensationFailed"],
    fence: "owner",
  },
  {
    command: "beginCompensation",
    actor: "orchestration",
    from: "Processing",
    to: ["Compensating"],
    fence: "owner",
  },
  {
    command: "resumeCompensation",
    actor: "orchestration",
    from: "Compensating",
    to: ["Compensating"],
    fence: "owner",
  },
  {
    command: "resolveDoubt",
    actor: "orchestration",
    from: "Compensating",
    to: ["Compensating"],
    fence: "owner",
  },
  {
    command: "compensateStep",
    actor: "orchestration",
    from: "Compensating",
    to: ["Compensating"],
    fence: "owner",
  },
  {
    command: "finishCompensation",
    actor: "orchestration",
    from: "Compensating",
    to: ["Compensated", "CompensationFailed"],
    fence: "owner",
  },
  {
    command: "recover",
    actor: "supervisor",
    from: "Processing",
    to: ["Pending", "Error", "Compensating"],
    fence: "expiredOwner",
  },
  {
    command: "recover",
    actor: "supervisor",
    from: "Compensating",
    to: ["Compensating", "CompensationFailed"],
    fence: "expiredOwner",
  },
  {
    command: "extendDeadline",
    actor: "supervisor",
    from: "Processing",
    to: ["Processing"],
    fence: "expiredOwner",
  },
  {
    command: "extendDeadline",
    actor: "supervisor",
    from: "Compensating",
    to: ["Compensating"],
    fence: "expiredOwner",
  },
  { command: "resubmit", actor: "operator", from: "Error", to: ["Pending"], fence: "unlocked" },
  { command: "compensate", actor: "operator", from: "Error", to: ["Compensating"], fence: "unlocked" },
  {
    command: "compensate",
    actor: "operator",
    from: "CompensationFailed",
    to: ["Compensating"],
    fence: "unlocked",
  },
];

/** Every move a step can make. */
export const STEP_TRANSITIONS: Readonly<Record<StepStatus, readonly StepStatus[]>> = {
  NotStarted: ["Running"],
  // Back to NotStarted only when deferred for an open circuit breaker before any call was made.
  Running: ["Completed", "Failed", "InDoubt", "NotStarted"],
  // Retried with the same idempotency key (forward), or resolved before an undo (compensation).
  InDoubt: ["Running", "Completed", "NotStarted"],
  Completed: ["Compensated", "CompensationFailed"],
  Failed: ["NotStarted"],
  Compensated: [],
  CompensationFailed: ["Compensated", "CompensationFailed"],
};

export type TransitionErrorCode =
  | "notAllowed"
  | "notOwner"
  | "notExpired"
  | "notYetDue"
  | "stepOutOfOrder"
  | "stepState"
  | "budgetExhausted"
  | "compensationRequired"
  | "nothingToCompensate"
  | "stepsIncomplete"
  | "compensationIncomplete"
  | "limitReached";

/** A refused transition. Returned, never thrown: refusal is a normal outcome for a fenced actor. */
export class TransitionError extends Error {
  override readonly name = "TransitionError";
  readonly kind = "TransitionError" as const;
  constructor(
    readonly code: TransitionErrorCode,
    readonly orderId: string,
    readonly actor: Actor,
    readonly command: CommandType,
    readonly from: ProcessState,
    detail: string,
  ) {
    super(`${actor} may not ${command} order ${orderId} in ${from}: ${detail}`);
  }
}

export interface TransitionOutcome {
  readonly record: StateRecord;
  /** False when the command had already been applied (a repeated activity) and nothing changed. */
  readonly changed: boolean;
  readonly rule: TransitionRule;
}

export function findRule(command: CommandType, actor: Actor, from: ProcessState): TransitionRule | undefined {
  return TRANSITIONS.find((r) => r.command === command && r.actor === actor && r.from === from);
}

/** Applies `command` by `actor` to `record`, or says why it may not. Pure: the input is not modified. */
export function applyTransition(
  record: StateRecord,
  actor: Actor,
  command: Command,
): Result<TransitionOutcome, TransitionError> {
  const rule = findRule(command.type, actor, record.processState);
  if (!rule)
    return refused(record, actor, command, { code: "notAllowed", detail: "no such transition in the table" });

  const fence = checkFence(record, rule.fence, command);
  if (fence) return refused(record, actor, command, fence);

  const next = applyCommand(record, command);
  if (!next.ok) return refused(record, actor, command, next.error);
  const { record: after, changed } = next.value;
  if (changed && !rule.to.includes(after.processState)) {
    throw new Error(`transition table violated: ${command.type} produced ${after.processState}`);
  }
  if (!changed) return ok({ record, changed, rule });
  const { history, historySummary } = historyWith(after, historyEntryOf(record, after, actor, command));
  return ok({ record: { ...after, updatedAt: command.now, history, historySummary }, changed, rule });
}

function refused(
  record: StateRecord,
  actor: Actor,
  command: Command,
  refusal: Refusal,
): Result<never, TransitionError> {
  const { code, detail } = refusal;
  return err(new TransitionError(code, record.orderId, actor, command.type, record.processState, detail));
}

/** What the history keeps of one transition: who moved the record how, and the failure it recorded. */
function historyEntryOf(
  before: StateRecord,
  after: StateRecord,
  actor: Actor,
  command: Command,
): HistoryEntry {
  const failure = after.lastError !== before.lastError ? after.lastError : null;
  const step = "step" in command ? command.step : (failure?.step ?? null);
  return {
    at: command.now,
    actor,
    command: command.type,
    from: before.processState,
    to: after.processState,
    attempt: after.attempt,
    step,
    code: failure?.code ?? null,
  };
}

interface Refusal {
  readonly code: TransitionErrorCode;
  readonly detail: string;
}
type Step = Result<{ record: StateRecord; changed: boolean }, Refusal>;
const refusal = (code: TransitionErrorCode, detail: string): Step => err({ code, detail });
const changedTo = (record: StateRecord): Step => ok({ record, changed: true });

function checkFence(record: StateRecord, fence: Fence, command: Command): Refusal | undefined {
  switch (fence) {
    case "unlocked":
      return record.lockedBy === null
        ? undefined
        : { code: "notOwner", detail: `locked by ${record.lockedBy}` };
    case "owner": {
      const instanceId = "instanceId" in command ? command.instanceId : undefined;
      return record.lockedBy !== null && record.lockedBy === instanceId
        ? undefined
        : { code: "notOwner", detail: `locked by ${record.lockedBy ?? "nobody"}, not ${instanceId}` };
    }
    case "expiredOwner": {
      const expected = "expectedLockedBy" in command ? command.expectedLockedBy : undefined;
      if (record.lockedBy === null || record.lockedBy !== expected) {
        return { code: "notOwner", detail: `locked by ${record.lockedBy ?? "nobody"}, not ${expected}` };
      }
      if (!hasPassed(record.completeBy, command.now)) {
        return { code: "notExpired", detail: `completeBy ${record.completeBy} has not passed` };
      }
      return undefined;
    }
  }
}

function applyCommand(record: StateRecord, command: Command): Step {
  switch (command.type) {
    case "claim":
      return claim(record, command);
    case "releaseClaim":
      return releaseClaim(record, command);
    case "startStep":
      return startStep(record, command);
    case "completeStep":
      return completeStep(record, command);
    case "finish":
      return finish(record, command);
    case "fail":
      return fail(record, command);
    case "beginCompensation":
      return beginCompensation(record, command);
    case "resumeCompensation":
      return resumeCompensation(record, command);
    case "resolveDoubt":
      return resolveDoubt(record, command);
    case "compensateStep":
      return compensateStep(record, command);
    case "finishCompensation":
      return finishCompensation(record, command);
    case "defer":
      return defer(record, command);
    case "recover":
      return recover(record, command);
    case "extendDeadline":
      return extendDeadline(record, command);
    case "resubmit":
      return resubmit(record, command);
    case "compensate":
      return operatorCompensate(record, command);
  }
}

type CommandOf<T extends CommandType> = Extract<Command, { type: T }>;

/** A new attempt: forward from `Pending`, or the next try at a compensation handed back. */
function claim(record: StateRecord, command: CommandOf<"claim">): Step {
  if (record.notBefore > command.now)
    return refusal("notYetDue", `notBefore ${record.notBefore} has not passed`);
  const attempt = record.attempt + 1;
  return changedTo({
    ...record,
    processState: record.processState === "Compensating" ? "Compensating" : "Processing",
    attempt,
    lockedBy: instanceIdFor(record.orderId, attempt),
    completeBy: attemptDeadline(command.now, command.attemptTimeoutMs),
  });
}

function releaseClaim(record: StateRecord, command: CommandOf<"releaseClaim">): Step {
  const started = startedSteps(record);
  if (started.length > 0) return refusal("stepState", `the attempt already started ${started.join(", ")}`);
  const failure: FailureInput = { kind: "transient", code: "StartFailed", message: command.reason };
  return changedTo(
    release({
      ...record,
      processState: "Pending",
      notBefore: command.retryAt,
      lastError: toFailure(failure, command.now),
    }),
  );
}

/** Steps the current attempt started: only such an attempt can have reached the Agent. */
function startedSteps(record: StateRecord): StepName[] {
  return record.steps
    .filter((s) => s.status === "Running" && s.attempt === record.attempt)
    .map((s) => s.name);
}

function startStep(record: StateRecord, command: CommandOf<"startStep">): Step {
  if (!record.steps.some((s) => s.name === command.step)) {
    return refusal(
      "stepState",
      `${command.step} is not a step of workflow version ${record.workflowVersion}`,
    );
  }
  const current = findStep(record, command.step);
  if (current.status === "Running" && current.attempt === record.attempt)
    return ok({ record, changed: false });
  // The order's own steps, as its workflow version lists them.
  const earlier = record.steps.slice(0, record.steps.indexOf(current));
  const unfinished = earlier.filter((s) => s.status !== "Completed").map((s) => s.name);
  if (unfinished.length > 0) return refusal("stepOutOfOrder", `${unfinished.join(", ")} not completed yet`);
  // An in-doubt step is retried with its idempotency key: the partner applies its effect at most once.
  if (current.status !== "NotStarted" && current.status !== "InDoubt") {
    return refusal("stepState", `${command.step} is ${current.status}`);
  }
  const grant = grantAllowance(record.retryBudget, command.requestedCalls, command.amplification);
  if (grant.granted === 0) {
    return refusal(
      "budgetExhausted",
      `retry budget spent (${record.retryBudget.granted}/${record.retryBudget.limit})`,
    );
  }
  return changedTo({
    ...record,
    steps: stepsWith(record, command.step, {
      status: "Running",
      completeBy: command.completeBy,
      attempt: record.attempt,
      allowance: grant.granted,
      updatedAt: command.now,
    }),
    completeBy: command.completeBy,
    retryBudget: grant.budget,
  });
}

function completeStep(record: StateRecord, command: CommandOf<"completeStep">): Step {
  const current = findStep(record, command.step);
  if (current.status === "Completed") return ok({ record, changed: false });
  if (current.status !== "Running") return refusal("stepState", `${command.step} is ${current.status}`);
  return changedTo(markApplied(record, command.step, command.reference, command.now));
}

/** The step applied its effect: `Completed`, with its reference in the compensation log. */
function markApplied(record: StateRecord, step: StepName, reference: string | null, now: IsoInstant) {
  return {
    ...record,
    steps: stepsWith(record, step, { status: "Completed", reference, updatedAt: now }),
    compensationLog: withLogEntry(record, step, reference, now),
    ...progressed(now),
  };
}

/**
 * A step made progress (or an operator started the order again): the age an operator sees counts from
 * now, and the order's run of deferrals, if it was in one, is over.
 */
function progressed(now: IsoInstant): Pick<StateRecord, "progressAt" | "deferredSince"> {
  return { progressAt: now, deferredSince: null };
}

/** The log with `step`'s entry: appended, or its reference filled in if the step was logged in doubt. */
function withLogEntry(
  record: StateRecord,
  step: StepName,
  reference: string | null,
  now: IsoInstant,
): CompensationEntry[] {
  if (record.compensationLog.some((entry) => entry.step === step)) {
    return record.compensationLog.map((entry) => (entry.step === step ? { ...entry, reference } : entry));
  }
  const entry: CompensationEntry = {
    sequence: record.compensationLog.length + 1,
    step,
    idempotencyKey: idempotencyKeyFor(record.orderId, step),
    reference,
    recordedAt: now,
  };
  return [...record.compensationLog, entry];
}

/** The partner refused the step, so it applied nothing: a log entry it had while in doubt goes. */
function withoutLogEntry(record: StateRecord, step: StepName): CompensationEntry[] {
  return record.compensationLog
    .filter((entry) => entry.step !== step)
    .map((entry, i) => ({ ...entry, sequence: i + 1 }));
}

function finish(record: StateRecord, _command: CommandOf<"finish">): Step {
  const unfinished = record.steps.filter((s) => s.status !== "Completed").map((s) => s.name);
  if (unfinished.length > 0) return refusal("stepsIncomplete", `${unfinished.join(", ")} not completed`);
  return changedTo(release({ ...record, processState: "Processed", lastError: null }));
}

function fail(record: StateRecord, command: CommandOf<"fail">): Step {
  if (record.steps.some((s) => s.status === "Completed")) {
    return refusal("compensationRequired", "completed steps must be compensated, not abandoned");
  }
  const failed = failStep(record, command.failure.step ?? null, command.now);
  if (!failed.ok) return failed;
  return changedTo(
    release({
      ...failed.value.record,
      processState: "Error",
      lastError: toFailure(command.failure, command.now),
    }),
  );
}

function beginCompensation(record: StateRecord, command: CommandOf<"beginCompensation">): Step {
  if (!record.steps.some((s) => s.status === "Completed")) {
    return refusal("nothingToCompensate", "no completed step to undo; fail the order instead");
  }
  const failed = failStep(record, command.failure.step ?? null, command.now);
  if (!failed.ok) return failed;
  return changedTo(
    grantUndo(
      {
        ...failed.value.record,
        processState: "Compensating",
        completeBy: command.completeBy,
        lastError: toFailure(command.failure, command.now),
        // The partner answered the step: whatever run of deferrals the order was in is over.
        deferredSince: null,
      },
      command.undo,
    ),
  );
}

function resumeCompensation(record: StateRecord, command: CommandOf<"resumeCompensation">): Step {
  // A compensation attempt runs no forward step, so a step marked with its attempt was granted by it.
  if (appliedStepStates(record).some((s) => s.attempt === record.attempt))
    return ok({ record, changed: false });
  return changedTo(grantUndo(record, command.undo));
}

/**
 * Grants one compensation attempt its calls from the budget, undo reserve included: for each step still
 * applied, its undo, and for an in-doubt one also the request that resolves the doubt. Each such
 * step's `allowance` holds its share, and `attempt` this attempt; zero when the budget is spent.
 */
function grantUndo(record: StateRecord, undo: UndoGrantRequest): StateRecord {
  const pending = appliedStepStates(record);
  const requests = pending.reduce((n, s) => n + (s.status === "InDoubt" ? 2 : 1), 0);
  if (requests === 0) return record;
  const affordable = Math.floor(remainingCalls(record.retryBudget, "undo") / (undo.amplification * requests));
  const perRequest = Math.min(undo.callsPerRequest, affordable);
  const charged = perRequest * requests * undo.amplification;
  let updated: StateRecord = {
    ...record,
    retryBudget: { ...record.retryBudget, granted: record.retryBudget.granted + charged },
  };
  for (const step of pending) {
    updated = replaceStep(updated, step.name, { allowance: perRequest, attempt: record.attempt });
  }
  return updated;
}

/** Steps whose effect is or may be applied and not yet undone, in log order. */
function appliedStepStates(record: StateRecord): StepState[] {
  return record.compensationLog
    .map((entry) => findStep(record, entry.step))
    .filter((s) => s.status !== "Compensated");
}

function resolveDoubt(record: StateRecord, command: CommandOf<"resolveDoubt">): Step {
  const current = findStep(record, command.step);
  if (current.status !== "InDoubt") {
    const already = command.applied ? current.status === "Completed" : current.status === "NotStarted";
    return already
      ? ok({ record, changed: false })
      : refusal("stepState", `${command.step} is ${current.status}`);
  }
  if (command.applied) return changedTo(markApplied(record, command.step, command.reference, command.now));
  return changedTo({
    ...record,
    steps: stepsWith(record, command.step, { status: "NotStarted", updatedAt: command.now }),
    compensationLog: withoutLogEntry(record, command.step),
    ...progressed(command.now),
  });
}

function compensateStep(record: StateRecord, command: CommandOf<"compensateStep">): Step {
  const target: StepStatus = command.outcome === "compensated" ? "Compensated" : "CompensationFailed";
  const current = findStep(record, command.step);
  if (current.status === target && target === "Compensated") return ok({ record, changed: false });
  const next = nextToCompensate(record);
  if (!next) return refusal("nothingToCompensate", "every completed step is already compensated");
  if (next.step !== command.step) {
    return refusal("stepOutOfOrder", `${next.step} must be compensated before ${command.step}`);
  }
  if (!STEP_TRANSITIONS[current.status].includes(target)) {
    return refusal("stepState", `${command.step} is ${current.status}`);
  }
  const undone = replaceStep(record, command.step, { status: target, updatedAt: command.now });
  const updated = target === "Compensated" ? { ...undone, ...progressed(command.now) } : undone;
  const failure = command.failure ? toFailure({ ...command.failure, step: command.step }, command.now) : null;
  return changedTo(failure ? { ...updated, lastError: failure } : updated);
}

function finishCompensation(record: StateRecord, command: CommandOf<"finishCompensation">): Step {
  const next = nextToCompensate(record);
  if (!next) return changedTo(release({ ...record, processState: "Compensated" }));
  if (command.failure) {
    const lastError = toFailure(command.failure, command.now);
    return changedTo(release({ ...record, processState: "CompensationFailed", lastError }));
  }
  const status = findStep(record, next.step).status;
  if (status === "CompensationFailed")
    return changedTo(release({ ...record, processState: "CompensationFailed" }));
  return refusal("compensationIncomplete", `${next.step} is not compensated yet`);
}

function defer(record: StateRecord, command: CommandOf<"defer">): Step {
  if (command.until < command.now) {
    return refusal("notAllowed", `the breaker's next probe ${command.until} is before ${command.now}`);
  }
  const deferredSince = record.deferredSince ?? command.now;
  // The order would still be waiting at the probe past its longest deferral: it waits no longer.
  const parked = pastLongestDeferral(deferredSince, command.until, command.maxDeferralMs);
  const deferred = (updated: StateRecord, refund: number): StateRecord =>
    release({
      ...updated,
      deferredSince,
      notBefore: command.until,
      retryBudget: {
        ...updated.retryBudget,
        granted: updated.retryBudget.granted - Math.min(updated.retryBudget.granted, refund),
      },
    });
  if (record.processState === "Compensating") {
    // Handed back like an expired compensation, but at once and uncounted; what it compensates for stays.
    const granted = appliedStepStates(record)
      .filter((s) => s.attempt === record.attempt)
      .reduce((n, s) => n + s.allowance * (s.status === "InDoubt" ? 2 : 1) * command.amplification, 0);
    const handedBack = deferred(record, Math.max(0, granted - command.callsMade));
    return changedTo(parked ? compensationParked(handedBack, command, deferredSince) : handedBack);
  }
  const current = findStep(record, command.step);
  if (current.status !== "Running" || current.attempt !== record.attempt) {
    return refusal("stepState", `${command.step} is ${current.status} in attempt ${current.attempt}`);
  }
  // A call that was made may have been applied: in doubt, retried with its key. With none made, the
  // step is as it was before this attempt started it.
  const wasInDoubt = record.compensationLog.some((e) => e.step === command.step && e.reference === null);
  const status = command.callsMade > 0 || wasInDoubt ? "InDoubt" : "NotStarted";
  const step = replaceStep(record, command.step, { status, allowance: 0, updatedAt: command.now });
  const failure: FailureInput = parked
    ? {
        kind: "stalled",
        code: PARTNER_UNAVAILABLE,
        message: pastLongest(command, deferredSince),
        step: command.step,
      }
    : { kind: "transient", code: PARTNER_UNAVAILABLE, message: command.reason, step: command.step };
  const updated: StateRecord = {
    ...step,
    processState: parked ? "Error" : "Pending",
    compensationLog:
      status === "InDoubt" ? withLogEntry(step, command.step, null, command.now) : step.compensationLog,
    lastError: toFailure(failure, command.now),
  };
  return changedTo(
    deferred(updated, Math.max(0, current.allowance * command.amplification - command.callsMade)),
  );
}

/** Why a deferral parks its order: the breaker's reason, and how long the order has waited. */
function pastLongest(command: CommandOf<"defer">, deferredSince: IsoInstant): string {
  return `${command.reason}; deferred since ${deferredSince}, the next probe at ${command.until} is past the longest deferral of ${command.maxDeferralMs} ms`;
}

/**
 * A compensation deferred past its longest deferral ends in `CompensationFailed`, naming the failure it
 * compensated for: what is still applied stays in the compensation log for an operator.
 */
function compensationParked(
  record: StateRecord,
  command: CommandOf<"defer">,
  deferredSince: IsoInstant,
): StateRecord {
  const cause = record.lastError
    ? `; compensating for ${record.lastError.code}: ${record.lastError.message}`
    : "";
  const failure: FailureInput = {
    kind: "stalled",
    code: PARTNER_UNAVAILABLE,
    message: `${pastLongest(command, deferredSince)}${cause}`,
    step: command.step,
  };
  return { ...record, processState: "CompensationFailed", lastError: toFailure(failure, command.now) };
}

function extendDeadline(record: StateRecord, command: CommandOf<"extendDeadline">): Step {
  if (!hostInterruptionsAllowed(record, command.policy)) {
    return refusal(
      "limitReached",
      `${record.hostInterruptions} host interruptions reach the limit of ${command.policy.maxHostInterruptions ?? DEFAULT_MAX_HOST_INTERRUPTIONS}`,
    );
  }
  if (hasPassed(command.completeBy, command.now)) {
    return refusal("notAllowed", `the new deadline ${command.completeBy} is not after ${command.now}`);
  }
  return changedTo({
    ...record,
    completeBy: command.completeBy,
    hostInterruptions: record.hostInterruptions + 1,
  });
}

function recover(record: StateRecord, command: CommandOf<"recover">): Step {
  if (command.interruption !== undefined && hostInterruptionsAllowed(record, command.policy)) {
    return recoverInterrupted(record, { ...command, interruption: command.interruption });
  }
  if (record.processState === "Compensating") return recoverCompensation(record, command);
  if (startedSteps(record).length === 0) {
    // The attempt never reached the Agent (its orchestration did not start, or could not read the
    // record): infrastructure, not the order, failed. Another attempt, and no failure counted.
    const notStarted: FailureInput = {
      kind: "timeout",
      code: "AttemptNotStarted",
      message: `attempt ${record.attempt} (${record.lockedBy}) started no step before its deadline ${record.completeBy}`,
    };
    return changedTo(
      release({
        ...record,
        processState: "Pending",
        notBefore: addMilliseconds(
          command.now,
          recoveryDelayMs(command.policy, record.failureCount + 1, command.random),
        ),
        lastError: toFailure(notStarted, command.now),
      }),
    );
  }
  const failureCount = record.failureCount + 1;
  const running = record.steps.find((s) => s.status === "Running")?.name ?? null;
  const timedOut: FailureInput = {
    kind: "timeout",
    code: "AttemptExpired",
    message: `attempt ${record.attempt} (${record.lockedBy}) passed its deadline ${record.completeBy}${running ? `; ${running} is in doubt` : ""}`,
    step: running,
  };
  const expired = { ...record, ...stepsInDoubt(record, command.now), failureCount };
  if (failureCount > command.policy.maxRecoveries) return recoveriesExhausted(expired, timedOut, command);
  return changedTo(
    release({
      ...expired,
      processState: "Pending",
      notBefore: addMilliseconds(command.now, recoveryDelayMs(command.policy, failureCount, command.random)),
      lastError: toFailure(timedOut, command.now),
    }),
  );
}

/**
 * The host let the deadline pass, not the order: another attempt as after any expiry (its running
 * steps in doubt, so the next attempt repeats them with their keys), with no failure counted.
 */
function recoverInterrupted(
  record: StateRecord,
  command: CommandOf<"recover"> & { readonly interruption: string },
): Step {
  const running = record.steps.find((s) => s.status === "Running")?.name ?? null;
  const interrupted: FailureInput = {
    kind: "timeout",
    code: "HostInterrupted",
    message: `attempt ${record.attempt} (${record.lockedBy}) passed its deadline ${record.completeBy} because ${command.interruption}; no failure counted${running ? `; ${running} is in doubt` : ""}`,
    step: running,
  };
  const compensating = record.processState === "Compensating";
  const spared = {
    ...record,
    ...(compensating ? {} : stepsInDoubt(record, command.now)),
    hostInterruptions: record.hostInterruptions + 1,
  };
  const failures = compensating ? record.compensationRecoveries : record.failureCount;
  return changedTo(
    release({
      ...spared,
      processState: compensating ? "Compensating" : "Pending",
      notBefore: addMilliseconds(
        command.now,
        recoveryDelayMs(command.policy, Math.max(1, failures), command.random),
      ),
      // A compensation keeps the failure it compensates for: that is what an operator needs to see.
      lastError: compensating ? record.lastError : toFailure(interrupted, command.now),
    }),
  );
}

/**
 * A running step of an expired attempt may have applied its effect (the Agent may have called the
 * partner): it is in doubt, and logged for compensation, never reset as if it had not run.
 */
function stepsInDoubt(record: StateRecord, now: IsoInstant): Pick<StateRecord, "steps" | "compensationLog"> {
  let updated = record;
  for (const step of record.steps.filter((s) => s.status === "Running")) {
    updated = {
      ...replaceStep(updated, step.name, { status: "InDoubt", updatedAt: now }),
      compensationLog: withLogEntry(updated, step.name, null, now),
    };
  }
  return { steps: updated.steps, compensationLog: updated.compensationLog };
}

/** Past the limit: `Error` for an operator, or, by policy, a compensation of what is or may be applied. */
function recoveriesExhausted(
  record: StateRecord,
  timedOut: FailureInput,
  command: CommandOf<"recover">,
): Step {
  const exhausted = toFailure(
    {
      ...timedOut,
      code: "RecoveriesExhausted",
      message: `${timedOut.message}; ${record.failureCount} failures exceed the limit of ${command.policy.maxRecoveries}`,
    },
    command.now,
  );
  if (command.policy.onExhausted === "compensate" && nextToCompensate(record)) {
    return changedTo(
      release({
        ...record,
        processState: "Compensating",
        notBefore: command.now,
        compensationRecoveries: 0,
        lastError: exhausted,
      }),
    );
  }
  return changedTo(release({ ...record, processState: "Error", lastError: exhausted }));
}

/**
 * A compensation whose attempt passed its deadline is work left to do, not a failure: it is handed
 * back (unlocked, after a backoff) for another attempt to claim, which undoes what is still applied
 * with the same idempotency keys. Past the recovery limit it ends in `CompensationFailed`.
 */
function recoverCompensation(record: StateRecord, command: CommandOf<"recover">): Step {
  const recoveries = record.compensationRecoveries + 1;
  const expired = `compensation attempt ${record.attempt} (${record.lockedBy}) passed its deadline ${record.completeBy}`;
  if (recoveries > command.policy.maxRecoveries) {
    const cause = record.lastError
      ? `; compensating for ${record.lastError.code}: ${record.lastError.message}`
      : "";
    const failure: FailureInput = {
      kind: "stalled",
      code: "CompensationRecoveriesExhausted",
      message: `${expired}; ${recoveries} expired compensation attempts exceed the limit of ${command.policy.maxRecoveries}${cause}`,
    };
    return changedTo(
      release({
        ...record,
        processState: "CompensationFailed",
        compensationRecoveries: recoveries,
        lastError: toFailure(failure, command.now),
      }),
    );
  }
  // `lastError` keeps the failure being compensated for: that is what an operator needs to see.
  return changedTo(
    release({
      ...record,
      compensationRecoveries: recoveries,
      notBefore: addMilliseconds(command.now, recoveryDelayMs(command.policy, recoveries, command.random)),
    }),
  );
}

/** Delay before the attempt after `failureCount` failures: jittered backoff, then the extended wait. */
export function recoveryDelayMs(policy: RecoveryPolicy, failureCount: number, random: RandomSource): number {
  if (failureCount > policy.extendedBackoffAfter) return policy.extendedDelayMs;
  return fullJitterDelayMs(policy.backoff, failureCount, random);
}

function resubmit(record: StateRecord, command: CommandOf<"resubmit">): Step {
  // A failed step runs again; an in-doubt one is retried with its idempotency key, so the partner
  // applies it at most once.
  const steps = record.steps.map((s) =>
    s.status === "Failed" ? { ...s, status: "NotStarted" as const } : s,
  );
  return changedTo({
    ...record,
    steps,
    processState: "Pending",
    failureCount: 0,
    notBefore: command.now,
    retryBudget: { ...record.retryBudget, granted: 0 },
    ...progressed(command.now),
    lastError: toFailure({ kind: "operator", code: "Resubmitted", message: command.reason }, command.now),
  });
}

/** Hands the order's applied steps to the starter to undo: `Compensating`, unlocked, due now. */
function operatorCompensate(record: StateRecord, command: CommandOf<"compensate">): Step {
  if (!nextToCompensate(record)) return refusal("nothingToCompensate", "no completed step to undo");
  const { limit, undoReserve, granted } = record.retryBudget;
  return changedTo({
    ...release(record),
    processState: "Compensating",
    notBefore: command.now,
    compensationRecoveries: 0,
    // The operator's decision brings a fresh undo reserve: what forward steps spent stays spent.
    retryBudget: { ...record.retryBudget, granted: Math.min(granted, limit - undoReserve) },
    ...progressed(command.now),
    lastError: toFailure(
      { kind: "operator", code: "CompensationRequested", message: command.reason },
      command.now,
    ),
  });
}

/** The compensation log entry to undo next: the latest whose step is not yet compensated. */
export function nextToCompensate(record: StateRecord): CompensationEntry | undefined {
  for (let i = record.compensationLog.length - 1; i >= 0; i--) {
    const entry = record.compensationLog[i];
    if (entry && findStep(record, entry.step).status !== "Compensated") return entry;
  }
  return undefined;
}

function findStep(record: StateRecord, name: StepName): StepState {
  const step = record.steps.find((s) => s.name === name);
  if (!step) throw new Error(`record ${record.orderId} has no step ${name}`);
  return step;
}

function replaceStep(record: StateRecord, name: StepName, changes: Partial<StepState>): StateRecord {
  return { ...record, steps: stepsWith(record, name, changes) };
}

/** The record's steps with `name`'s changed: for a caller that changes more of the record at once. */
function stepsWith(record: StateRecord, name: StepName, changes: Partial<StepState>): StepState[] {
  return record.steps.map((s) => (s.name === name ? { ...s, ...changes } : s));
}

/**
 * The step the failure names: a running one was refused by the partner, so it is `Failed` and applied
 * nothing (a log entry from an earlier doubt goes). One refused a start for want of budget never ran:
 * it stays as it was, in doubt included.
 */
function failStep(record: StateRecord, step: StepName | null, now: IsoInstant): Step {
  if (step === null) return ok({ record, changed: true });
  const status = findStep(record, step).status;
  if (status === "NotStarted" || status === "InDoubt") return ok({ record, changed: true });
  if (status !== "Running") return refusal("stepState", `${step} is ${status}, not Running`);
  return changedTo({
    ...record,
    steps: stepsWith(record, step, { status: "Failed", updatedAt: now }),
    compensationLog: withoutLogEntry(record, step),
  });
}

/** The owner lets go: terminal and `Pending` records are unlocked and have no deadline. */
function release(record: StateRecord): StateRecord {
  return { ...record, lockedBy: null, completeBy: null };
}

function toFailure(input: FailureInput, at: IsoInstant): Failure {
  return { kind: input.kind, code: input.code, message: input.message, step: input.step ?? null, at };
}
