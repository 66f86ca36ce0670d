import { attemptDeadline, pastLongestDeferral } from "./deadline-rules.js";
import {
  type Applied,
  appliedStepStates,
  changedTo,
  compensatingFor,
  failStep,
  findStep,
  markApplied,
  refuse,
  release,
  replaceStep,
  startedSteps,
  stepsWith,
  toFailure,
  withLogEntry,
} from "./record-changes.js";

import { ok } from "./result.js";
import { grantAllowance } from "./retry-budget.js";
import { PARTNER_UNAVAILABLE, type StateRecord } from "./state-record.js";
import type { IsoInstant } from "./time.js";
import type { CommandOf, FailureInput } from "./transition-commands.js";
import { instanceIdFor } from "./workflow.js";

// The forward moves: a claim, the steps, the end of an attempt, a deferral for an open breaker.

/** A new attempt: forward from `Pending`, or the next try at a compensation handed back. */
export function claim(record: StateRecord, command: CommandOf<"claim">): Applied {
  if (record.notBefore > command.now)
    return refuse("notYetDue", `notBefore ${record.notBefore} has not passed`);
  const attempt = record.attempt + 1;
  return changedTo({
    ...record,
    processState: record.processState === "Compensating" ? "Compensating" : "Processing",
    attempt,
    lockedBy: instanceIdFor(record.orderId, attempt),
    completeBy: attemptDeadline(command.now, command.attemptTimeoutMs),
  });
}

export function releaseClaim(record: StateRecord, command: CommandOf<"releaseClaim">): Applied {
  const started = startedSteps(record);
  if (started.length > 0) return refuse("stepState", `the attempt already started ${started.join(", ")}`);
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

export function startStep(record: StateRecord, command: CommandOf<"startStep">): Applied {
  if (!record.steps.some((s) => s.name === command.step)) {
    return refuse("stepState", `${command.step} is not a step of workflow version ${record.workflowVersion}`);
  }
  const current = findStep(record, command.step);
  if (current.status === "Running" && current.attempt === record.attempt)
    return ok({ record, changed: false });
  // The order's own steps, as its workflow version lists them.
  const earlier = record.steps.slice(0, record.steps.indexOf(current));
  const unfinished = earlier.filter((s) => s.status !== "Completed").map((s) => s.name);
  if (unfinished.length > 0) return refuse("stepOutOfOrder", `${unfinished.join(", ")} not completed yet`);
  // An in-doubt step is retried with its idempotency key: the partner applies its effect at most once.
  if (current.status !== "NotStarted" && current.status !== "InDoubt") {
    return refuse("stepState", `${command.step} is ${current.status}`);
  }
  const grant = grantAllowance(record.retryBudget, command.requestedCalls, command.amplification);
  if (grant.granted === 0) {
    return refuse(
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

export function completeStep(record: StateRecord, command: CommandOf<"completeStep">): Applied {
  const current = findStep(record, command.step);
  if (current.status === "Completed") return ok({ record, changed: false });
  if (current.status !== "Running") return refuse("stepState", `${command.step} is ${current.status}`);
  return changedTo(markApplied(record, command.step, command.reference, command.now));
}

export function finish(record: StateRecord, _command: CommandOf<"finish">): Applied {
  const unfinished = record.steps.filter((s) => s.status !== "Completed").map((s) => s.name);
  if (unfinished.length > 0) return refuse("stepsIncomplete", `${unfinished.join(", ")} not completed`);
  return changedTo(release({ ...record, processState: "Processed", lastError: null }));
}

export function fail(record: StateRecord, command: CommandOf<"fail">): Applied {
  if (record.steps.some((s) => s.status === "Completed")) {
    return refuse("compensationRequired", "completed steps must be compensated, not abandoned");
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

export function defer(record: StateRecord, command: CommandOf<"defer">): Applied {
  if (command.until < command.now) {
    return refuse("notAllowed", `the breaker's next probe ${command.until} is before ${command.now}`);
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
    return refuse("stepState", `${command.step} is ${current.status} in attempt ${current.attempt}`);
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
  const failure: FailureInput = {
    kind: "stalled",
    code: PARTNER_UNAVAILABLE,
    message: `${pastLongest(command, deferredSince)}${compensatingFor(record)}`,
    step: command.step,
  };
  return { ...record, processState: "CompensationFailed", lastError: toFailure(failure, command.now) };
}
