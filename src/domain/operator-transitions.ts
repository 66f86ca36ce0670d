import {
  type Applied,
  changedTo,
  nextToCompensate,
  progressed,
  refuse,
  release,
  toFailure,
} from "./record-changes.js";
import type { StateRecord } from "./state-record.js";
import type { CommandOf } from "./transition-commands.js";

// The operator's moves: resubmit an order in `Error`, or compensate it.

export function resubmit(record: StateRecord, command: CommandOf<"resubmit">): Applied {
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
export function operatorCompensate(record: StateRecord, command: CommandOf<"compensate">): Applied {
  if (!nextToCompensate(record)) return refuse("nothingToCompensate", "no completed step to undo");
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
