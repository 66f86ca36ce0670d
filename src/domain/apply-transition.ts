import {
  beginCompensation,
  compensateStep,
  finishCompensation,
  resolveDoubt,
  resumeCompensation,
} from "./compensation-transitions.js";
import { hasPassed } from "./deadline-rules.js";
import { claim, completeStep, defer, fail, finish, releaseClaim, startStep } from "./forward-transitions.js";
import { operatorCompensate, resubmit } from "./operator-transitions.js";
import type { Applied, Refusal } from "./record-changes.js";
import { type HistoryEntry, historyWith } from "./record-history.js";
import { extendDeadline, recover } from "./recovery-transitions.js";
import { err, ok, type Result } from "./result.js";
import type { ProcessState, StateRecord } from "./state-record.js";
import type { Actor, Command, CommandType, Fence, TransitionErrorCode } from "./transition-commands.js";
import { findRule, type TransitionRule } from "./transition-table.js";

// Applies one command to a state record: the table, the fence, the move, the history entry.

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

function applyCommand(record: StateRecord, command: Command): Applied {
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
