import { fullJitterDelayMs, type RandomSource } from "./backoff.js";
import { hasPassed } from "./deadline-rules.js";
import {
  type Applied,
  changedTo,
  compensatingFor,
  nextToCompensate,
  refuse,
  release,
  replaceStep,
  startedSteps,
  toFailure,
  withLogEntry,
} from "./record-changes.js";

import type { StateRecord } from "./state-record.js";
import { addMilliseconds, type IsoInstant } from "./time.js";
import {
  type CommandOf,
  DEFAULT_MAX_HOST_INTERRUPTIONS,
  type FailureInput,
  type RecoveryPolicy,
} from "./transition-commands.js";
import type { StepName } from "./workflow.js";

// The Supervisor's moves: an expired attempt recovered, or a held-up one given its deadline again.

function hostInterruptionsAllowed(record: StateRecord, policy: RecoveryPolicy): boolean {
  return record.hostInterruptions < (policy.maxHostInterruptions ?? DEFAULT_MAX_HOST_INTERRUPTIONS);
}

export function extendDeadline(record: StateRecord, command: CommandOf<"extendDeadline">): Applied {
  if (!hostInterruptionsAllowed(record, command.policy)) {
    return refuse(
      "limitReached",
      `${record.hostInterruptions} host interruptions reach the limit of ${command.policy.maxHostInterruptions ?? DEFAULT_MAX_HOST_INTERRUPTIONS}`,
    );
  }
  if (hasPassed(command.completeBy, command.now)) {
    return refuse("notAllowed", `the new deadline ${command.completeBy} is not after ${command.now}`);
  }
  return changedTo({
    ...record,
    completeBy: command.completeBy,
    hostInterruptions: record.hostInterruptions + 1,
  });
}

export function recover(record: StateRecord, command: CommandOf<"recover">): Applied {
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
        notBefore: recoveryDue(command, record.failureCount + 1),
        lastError: toFailure(notStarted, command.now),
      }),
    );
  }
  const failureCount = record.failureCount + 1;
  const running = runningStep(record);
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
      notBefore: recoveryDue(command, failureCount),
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
): Applied {
  const running = runningStep(record);
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
      notBefore: recoveryDue(command, Math.max(1, failures)),
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
): Applied {
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
function recoverCompensation(record: StateRecord, command: CommandOf<"recover">): Applied {
  const recoveries = record.compensationRecoveries + 1;
  const expired = `compensation attempt ${record.attempt} (${record.lockedBy}) passed its deadline ${record.completeBy}`;
  if (recoveries > command.policy.maxRecoveries) {
    const failure: FailureInput = {
      kind: "stalled",
      code: "CompensationRecoveriesExhausted",
      message: `${expired}; ${recoveries} expired compensation attempts exceed the limit of ${command.policy.maxRecoveries}${compensatingFor(record)}`,
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
      notBefore: recoveryDue(command, recoveries),
    }),
  );
}

/** When the attempt after `failureCount` failures is due: now plus the recovery delay. */
function recoveryDue(command: CommandOf<"recover">, failureCount: number): IsoInstant {
  return addMilliseconds(command.now, recoveryDelayMs(command.policy, failureCount, command.random));
}

/** The step the expired attempt was running, if any: the one that may have applied its effect. */
function runningStep(record: StateRecord): StepName | null {
  return record.steps.find((s) => s.status === "Running")?.name ?? null;
}

/** Delay before the attempt after `failureCount` failures: jittered backoff, then the extended wait. */
export function recoveryDelayMs(policy: RecoveryPolicy, failureCount: number, random: RandomSource): number {
  if (failureCount > policy.extendedBackoffAfter) return policy.extendedDelayMs;
  return fullJitterDelayMs(policy.backoff, failureCount, random);
}
