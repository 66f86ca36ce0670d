import { err, ok, type Result } from "./result.js";
import type { CompensationEntry, Failure, StateRecord, StepState } from "./state-record.js";
import type { IsoInstant } from "./time.js";
import type { FailureInput, TransitionErrorCode } from "./transition-commands.js";
import { idempotencyKeyFor, type StepName } from "./workflow.js";

// The small changes the transitions make to a record, and how they say what they did or why not.

/** Why a move was refused, in the words a `TransitionError` carries. */
export interface Refusal {
  readonly code: TransitionErrorCode;
  readonly detail: string;
}
/** What a move did: the record after it, and whether it changed (not on a repeat), or why it was refused. */
export type Applied = Result<{ record: StateRecord; changed: boolean }, Refusal>;
export const refuse = (code: TransitionErrorCode, detail: string): Applied => err({ code, detail });
export const changedTo = (record: StateRecord): Applied => ok({ record, changed: true });

export function findStep(record: StateRecord, name: StepName): StepState {
  const step = record.steps.find((s) => s.name === name);
  if (!step) throw new Error(`record ${record.orderId} has no step ${name}`);
  return step;
}

export function replaceStep(record: StateRecord, name: StepName, changes: Partial<StepState>): StateRecord {
  return { ...record, steps: stepsWith(record, name, changes) };
}

/** The record's steps with `name`'s changed: for a caller that changes more of the record at once. */
export function stepsWith(record: StateRecord, name: StepName, changes: Partial<StepState>): StepState[] {
  return record.steps.map((s) => (s.name === name ? { ...s, ...changes } : s));
}

/** Steps the current attempt started: only such an attempt can have reached the Agent. */
export function startedSteps(record: StateRecord): StepName[] {
  return record.steps
    .filter((s) => s.status === "Running" && s.attempt === record.attempt)
    .map((s) => s.name);
}

/** Steps whose effect is or may be applied and not yet undone, in log order. */
export function appliedStepStates(record: StateRecord): StepState[] {
  return record.compensationLog
    .map((entry) => findStep(record, entry.step))
    .filter((s) => s.status !== "Compensated");
}

/** The compensation log entry to undo next: the latest whose step is not yet compensated. */
export function nextToCompensate(record: StateRecord): CompensationEntry | undefined {
  for (let i = record.compensationLog.length - 1; i >= 0; i--) {
    const entry = record.compensationLog[i];
    if (entry && findStep(record, entry.step).status !== "Compensated") return entry;
  }
  return undefined;
}

/** The step applied its effect: `Completed`, with its reference in the compensation log. */
export function markApplied(record: StateRecord, step: StepName, reference: string | null, now: IsoInstant) {
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
export function progressed(now: IsoInstant): Pick<StateRecord, "progressAt" | "deferredSince"> {
  return { progressAt: now, deferredSince: null };
}

/** The log with `step`'s entry: appended, or its reference filled in if the step was logged in doubt. */
export function withLogEntry(
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
export function withoutLogEntry(record: StateRecord, step: StepName): CompensationEntry[] {
  return record.compensationLog
    .filter((entry) => entry.step !== step)
    .map((entry, i) => ({ ...entry, sequence: i + 1 }));
}

/**
 * The step the failure names: a running one was refused by the partner, so it is `Failed` and applied
 * nothing (a log entry from an earlier doubt goes). One refused a start for want of budget never ran:
 * it stays as it was, in doubt included.
 */
export function failStep(record: StateRecord, step: StepName | null, now: IsoInstant): Applied {
  if (step === null) return ok({ record, changed: true });
  const status = findStep(record, step).status;
  if (status === "NotStarted" || status === "InDoubt") return ok({ record, changed: true });
  if (status !== "Running") return refuse("stepState", `${step} is ${status}, not Running`);
  return changedTo({
    ...record,
    steps: stepsWith(record, step, { status: "Failed", updatedAt: now }),
    compensationLog: withoutLogEntry(record, step),
  });
}

/** The owner lets go: terminal and `Pending` records are unlocked and have no deadline. */
export function release(record: StateRecord): StateRecord {
  return { ...record, lockedBy: null, completeBy: null };
}

export function toFailure(input: FailureInput, at: IsoInstant): Failure {
  return { kind: input.kind, code: input.code, message: input.message, step: input.step ?? null, at };
}

/** What a compensation that ends is compensating for, as its failure's message says: the failure it undoes. */
export function compensatingFor(record: StateRecord): string {
  return record.lastError ? `; compensating for ${record.lastError.code}: ${record.lastError.message}` : "";
}
