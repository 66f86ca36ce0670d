import type { BackoffPolicy, RandomSource } from "./backoff.js";
import type { FailureKind } from "./state-record.js";
import type { IsoInstant } from "./time.js";
import type { StepName } from "./workflow.js";

// The commands that move a state record, who sends them, and the words a refusal is given in
// (docs/architecture.md, "Transitions").

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

export type CommandOf<T extends CommandType> = Extract<Command, { type: T }>;

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
