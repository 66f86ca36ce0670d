import type { ProcessState, StepStatus } from "./state-record.js";
import type { Actor, CommandType, Fence } from "./transition-commands.js";

// The transition table: every move a record and its steps can make, and who may make it.

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

export function findRule(command: CommandType, actor: Actor, from: ProcessState): TransitionRule | undefined {
  return TRANSITIONS.find((r) => r.command === command && r.actor === actor && r.from === from);
}
