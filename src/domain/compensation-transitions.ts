import {
  type Applied,
  appliedStepStates,
  changedTo,
  failStep,
  findStep,
  markApplied,
  nextToCompensate,
  progressed,
  refuse,
  release,
  replaceStep,
  stepsWith,
  toFailure,
  withoutLogEntry,
} from "./record-changes.js";
import { ok } from "./result.js";
import { remainingCalls } from "./retry-budget.js";
import type { StateRecord, StepStatus } from "./state-record.js";
import type { CommandOf, UndoGrantRequest } from "./transition-commands.js";
import { STEP_TRANSITIONS } from "./transition-table.js";

// The compensation moves: begun or resumed (its calls granted), doubts resolved, steps undone, ended.

export function beginCompensation(record: StateRecord, command: CommandOf<"beginCompensation">): Applied {
  if (!record.steps.some((s) => s.status === "Completed")) {
    return refuse("nothingToCompensate", "no completed step to undo; fail the order instead");
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

export function resumeCompensation(record: StateRecord, command: CommandOf<"resumeCompensation">): Applied {
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

export function resolveDoubt(record: StateRecord, command: CommandOf<"resolveDoubt">): Applied {
  const current = findStep(record, command.step);
  if (current.status !== "InDoubt") {
    const already = command.applied ? current.status === "Completed" : current.status === "NotStarted";
    return already
      ? ok({ record, changed: false })
      : refuse("stepState", `${command.step} is ${current.status}`);
  }
  if (command.applied) return changedTo(markApplied(record, command.step, command.reference, command.now));
  return changedTo({
    ...record,
    steps: stepsWith(record, command.step, { status: "NotStarted", updatedAt: command.now }),
    compensationLog: withoutLogEntry(record, command.step),
    ...progressed(command.now),
  });
}

export function compensateStep(record: StateRecord, command: CommandOf<"compensateStep">): Applied {
  const target: StepStatus = command.outcome === "compensated" ? "Compensated" : "CompensationFailed";
  const current = findStep(record, command.step);
  if (current.status === target && target === "Compensated") return ok({ record, changed: false });
  const next = nextToCompensate(record);
  if (!next) return refuse("nothingToCompensate", "every completed step is already compensated");
  if (next.step !== command.step) {
    return refuse("stepOutOfOrder", `${next.step} must be compensated before ${command.step}`);
  }
  if (!STEP_TRANSITIONS[current.status].includes(target)) {
    return refuse("stepState", `${command.step} is ${current.status}`);
  }
  const undone = replaceStep(record, command.step, { status: target, updatedAt: command.now });
  const updated = target === "Compensated" ? { ...undone, ...progressed(command.now) } : undone;
  const failure = command.failure ? toFailure({ ...command.failure, step: command.step }, command.now) : null;
  return changedTo(failure ? { ...updated, lastError: failure } : updated);
}

export function finishCompensation(record: StateRecord, command: CommandOf<"finishCompensation">): Applied {
  const next = nextToCompensate(record);
  if (!next) return changedTo(release({ ...record, processState: "Compensated" }));
  if (command.failure) {
    const lastError = toFailure(command.failure, command.now);
    return changedTo(release({ ...record, processState: "CompensationFailed", lastError }));
  }
  const status = findStep(record, next.step).status;
  if (status === "CompensationFailed")
    return changedTo(release({ ...record, processState: "CompensationFailed" }));
  return refuse("compensationIncomplete", `${next.step} is not compensated yet`);
}
