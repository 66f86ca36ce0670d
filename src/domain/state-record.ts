import { z } from "zod";
import type { Order } from "./order.js";
import { HISTORY_LIMIT, historyEntrySchema, historySummarySchema } from "./record-history.js";
import type { Result } from "./result.js";
import { type IsoInstant, isoInstantSchema } from "./time.js";
import { traceparentSchema } from "./trace-context.js";
import {
  integer,
  literal,
  oneOf,
  text,
  type Upgrades,
  type ValidationError,
  validateVersioned,
} from "./validation.js";
import {
  isWorkflowVersion,
  LATEST_WORKFLOW_VERSION,
  ORDER_STEPS,
  type StepName,
  WORKFLOW_VERSIONS,
  workflowOf,
} from "./workflow.js";

/**
 * Version 2: the references of the steps classified personal or payment (data-classification.ts) may
 * be stored sealed (`enc1.` values). A version-1 reader would take a sealed value for a partner's
 * reference and send it in an undo, so it must refuse a version-2 record, which the version makes it
 * do. A version-1 record (every reference in clear) is a valid version-2 one: it is upgraded on read
 * and written back as version 2, sealed.
 *
 * Version 3: `deferredSince` and `progressAt` (F24-4), which a version-2 reader would refuse as unknown
 * fields; the version makes it refuse the record for what it is, a later one.
 */
export const STATE_SCHEMA_VERSION = 3;

/** The failure code of an order whose partner operation's circuit breaker was open (forward-transitions.ts, `defer`). */
export const PARTNER_UNAVAILABLE = "PartnerUnavailable";

/**
 * Each older version of the record, upgraded to the next. Version 3 adds `deferredSince` and
 * `progressAt` (F24-4): a version-2 record's progress is its latest step that completed or was undone
 * (its acceptance if none), and a version-2 record waiting on a deferral counts its run of deferrals
 * from its last one, which is never earlier than the first: its limit is not reached early.
 */
export const STATE_RECORD_UPGRADES: Upgrades = {
  1: (v1) => ({ ...v1, schemaVersion: 2 }),
  2: (v2) => ({
    ...v2,
    schemaVersion: 3,
    deferredSince: lastDeferralOf(v2),
    progressAt: progressOf(v2),
  }),
};

/**
 * When a version-2 record `Pending` after a deferral was last deferred, or null (read before validation).
 * A compensation handed back by a deferral keeps the failure it compensates for, so it starts its count
 * at its next deferral.
 */
function lastDeferralOf(v2: Readonly<Record<string, unknown>>): unknown {
  const failure = v2.lastError as { code?: unknown; at?: unknown } | null | undefined;
  return v2.processState === "Pending" && failure?.code === PARTNER_UNAVAILABLE ? (failure.at ?? null) : null;
}

/**
 * The latest of a version-2 record's acceptance and its steps' last changes as completed or undone
 * (read before validation: anything malformed is left for the schema to report).
 */
function progressOf(v2: Readonly<Record<string, unknown>>): unknown {
  if (typeof v2.createdAt !== "string" || !Array.isArray(v2.steps)) return v2.createdAt;
  let latest: string = v2.createdAt;
  for (const step of v2.steps as readonly { status?: unknown; updatedAt?: unknown }[]) {
    const progressed = step?.status === "Completed" || step?.status === "Compensated";
    if (progressed && typeof step.updatedAt === "string" && step.updatedAt > latest) latest = step.updatedAt;
  }
  return latest;
}

/**
 * A partner's reference is at most 256 characters (the Agent's reply); the state store may hold it
 * sealed (data-classification.ts), which takes up to 417: `enc1.`, a key id of up to 32, `.`, and the
 * base64url of a 12-byte IV, a 16-byte tag and the reference.
 */
const SEALED_REFERENCE_MAX = 512;

import { isProcessState, PROCESS_STATES, type ProcessState } from "./process-state.js";

export { isProcessState, PROCESS_STATES, type ProcessState };

/** States in which no actor but an operator will move the record again. */
export const TERMINAL_STATES: readonly ProcessState[] = [
  "Processed",
  "Error",
  "Compensated",
  "CompensationFailed",
];

/**
 * Terminal states whose records retention deletes, RETENTION_DAYS after their last change. `Error` and
 * `CompensationFailed` are not among them: those orders wait for an operator however long it takes.
 */
export const RETIRED_STATES: readonly ProcessState[] = ["Processed", "Compensated"];

export function isTerminal(state: ProcessState): boolean {
  return TERMINAL_STATES.includes(state);
}

export const STEP_STATUSES = [
  "NotStarted",
  "Running",
  /** Its attempt expired after the Agent may have called the partner: it may have applied its effect. */
  "InDoubt",
  "Completed",
  "Failed",
  "Compensated",
  "CompensationFailed",
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const FAILURE_KINDS = ["transient", "permanent", "timeout", "stalled", "budget", "operator"] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

const failureSchema = z.strictObject({
  kind: oneOf(FAILURE_KINDS),
  code: text(1, 128),
  message: text(0, 2_000),
  step: oneOf(ORDER_STEPS).nullable(),
  at: isoInstantSchema,
});
export type Failure = z.infer<typeof failureSchema>;

const stepStateSchema = z.strictObject({
  name: oneOf(ORDER_STEPS),
  status: oneOf(STEP_STATUSES),
  /** Deadline of the step in the attempt that started it. */
  completeBy: isoInstantSchema.nullable(),
  /** Attempt that last started the step, or granted it calls to undo it. */
  attempt: integer(0, 1_000_000),
  /** Partner calls the Scheduler granted this step (or each request of its undo) in that attempt. */
  allowance: integer(0, 1_000_000),
  /** The partner's reference for the effect (used to undo it). */
  reference: text(0, SEALED_REFERENCE_MAX).nullable(),
  updatedAt: isoInstantSchema.nullable(),
});
export type StepState = z.infer<typeof stepStateSchema>;

/**
 * One entry per step that applied or may have applied its effect (completed or in doubt), in the
 * order they ran: undone in reverse. An in-doubt step's entry has no reference until its doubt is resolved.
 */
const compensationEntrySchema = z.strictObject({
  sequence: integer(1, 1_000),
  step: oneOf(ORDER_STEPS),
  idempotencyKey: text(1, 256),
  reference: text(0, SEALED_REFERENCE_MAX).nullable(),
  recordedAt: isoInstantSchema,
});
export type CompensationEntry = z.infer<typeof compensationEntrySchema>;

/** The Scheduler's end-to-end retry budget: partner calls this order may cost, and those already granted. */
const retryBudgetSchema = z.strictObject({
  limit: integer(0, 1_000_000),
  granted: integer(0, 1_000_000),
  /** Part of `limit` set aside at acceptance for undoing the order: forward steps may not spend it. */
  undoReserve: integer(0, 1_000_000).default(0),
});
export type RetryBudgetState = z.infer<typeof retryBudgetSchema>;

export const stateRecordSchema = z.strictObject({
  orderId: text(1, 64),
  processState: oneOf(PROCESS_STATES),
  lockedBy: text(1, 128).nullable(),
  completeBy: isoInstantSchema.nullable(),
  notBefore: isoInstantSchema,
  failureCount: integer(0, 1_000_000),
  /** Compensation attempts that passed their deadline and were handed back; records before it had none. */
  compensationRecoveries: integer(0, 1_000_000).default(0),
  /**
   * Attempts the Supervisor found past their deadline because their host was down, not because of the
   * order: given their deadline again, or recovered with no failure counted (bounded by the policy's
   * `maxHostInterruptions`). Records before it had none.
   */
  hostInterruptions: integer(0, 1_000_000).default(0),
  /**
   * When the order was first deferred in its current run of deferrals (the partner's circuit breaker for
   * its step's operation open), or null: a step that makes progress, a permanent refusal that starts a
   * compensation, or an operator's command ends the run. Past `maxDeferralMs` after it the order is parked for an operator (forward-transitions.ts, `defer`).
   */
  deferredSince: isoInstantSchema.nullable(),
  attempt: integer(0, 1_000_000),
  steps: z.array(stepStateSchema),
  compensationLog: z.array(compensationEntrySchema),
  retryBudget: retryBudgetSchema,
  lastError: failureSchema.nullable(),
  /** Every transition of the record, oldest first, written by the update that made it (record-history.ts). */
  history: z.array(historyEntrySchema).max(HISTORY_LIMIT).default([]),
  historySummary: historySummarySchema.nullable().default(null),
  replyTo: text(1, 260).nullable(),
  /** The trace of the order's submission: spans of later work on the order (attempts, recoveries) join it. */
  traceparent: traceparentSchema.nullable().default(null),
  schemaVersion: literal(STATE_SCHEMA_VERSION),
  /** The workflow version the order was accepted under: it runs and compensates under that version only. */
  workflowVersion: integer(1, 1_000).refine(isWorkflowVersion, {
    error: `is not a workflow version this deployment runs (${WORKFLOW_VERSIONS.join(", ")}): a newer deployment wrote it`,
  }),
  createdAt: isoInstantSchema,
  /**
   * When the order was accepted or last made progress (a step completed, was undone or had its doubt
   * resolved; an operator's command starts it again): what the operator's age of a waiting order counts
   * from, where `updatedAt` moves with every claim, deferral and recovery.
   */
  progressAt: isoInstantSchema,
  updatedAt: isoInstantSchema,
});

/** The state-store record of one order process (docs/architecture.md, "The state record"). */
export type StateRecord = z.infer<typeof stateRecordSchema>;

/** A record as a store returns it: with the ETag that every conditional update must present. */
export type StoredStateRecord = StateRecord & { readonly _etag: string };

export interface NewRecordInput {
  readonly order: Order;
  readonly replyTo: string | null;
  readonly now: IsoInstant;
  readonly retryBudgetLimit: number;
  /** Calls of `retryBudgetLimit` kept for compensation (at most the limit). */
  readonly undoReserve: number;
  /** The submission's span, when traces are kept. */
  readonly traceparent?: string | null;
  /** The workflow version the order is pinned to (the WORKFLOW_VERSION setting; default the latest). */
  readonly workflowVersion?: number;
}

/** The record submission writes: `Pending`, unlocked, no failures, every step of its version not started. */
export function newPendingRecord(input: NewRecordInput): StateRecord {
  const workflowVersion = input.workflowVersion ?? LATEST_WORKFLOW_VERSION;
  return {
    orderId: input.order.orderId,
    processState: "Pending",
    lockedBy: null,
    completeBy: null,
    notBefore: input.now,
    failureCount: 0,
    compensationRecoveries: 0,
    hostInterruptions: 0,
    deferredSince: null,
    attempt: 0,
    steps: workflowOf(workflowVersion).steps.map((name) => ({
      name,
      status: "NotStarted",
      completeBy: null,
      attempt: 0,
      allowance: 0,
      reference: null,
      updatedAt: null,
    })),
    compensationLog: [],
    retryBudget: {
      limit: input.retryBudgetLimit,
      granted: 0,
      undoReserve: Math.min(input.undoReserve, input.retryBudgetLimit),
    },
    lastError: null,
    history: [],
    historySummary: null,
    replyTo: input.replyTo,
    traceparent: input.traceparent ?? null,
    schemaVersion: STATE_SCHEMA_VERSION,
    workflowVersion,
    createdAt: input.now,
    progressAt: input.now,
    updatedAt: input.now,
  };
}

/** Compensation log entries whose effect is still applied (not yet undone), in completion order. */
export function appliedSteps(record: StateRecord): CompensationEntry[] {
  return record.compensationLog.filter((entry) => stepOf(record, entry.step)?.status !== "Compensated");
}

/** An operator's summary of a failed compensation: why, and which effects are still applied. */
export function compensationFailure(record: StateRecord): string {
  const applied = appliedSteps(record).map((entry) => entry.step);
  const why = record.lastError?.message ?? "an undo failed";
  return `${why}; still applied: ${applied.length > 0 ? applied.join(", ") : "nothing"}`;
}

/**
 * Whether the submitter has already heard `processing` in the order's current run, which begins when
 * it is accepted or resubmitted by an operator: an attempt tells it before it starts its first step,
 * so a step started since the run began says it was told (F24-4). The next attempt after a deferral or
 * a recovery is then no news to the submitter. Only the transitions the history keeps are looked at
 * (the latest 40); a run whose kept transitions started no step is told again, which costs a message,
 * never a status missed.
 */
export function heardProcessing(record: Pick<StateRecord, "history">): boolean {
  for (let i = record.history.length - 1; i >= 0; i--) {
    const command = record.history[i]?.command;
    if (command === "startStep") return true;
    if (command === "resubmit") return false;
  }
  return false;
}

/** Names of the steps in `status`, in workflow order. */
export function stepsIn(record: StateRecord, status: StepStatus): StepName[] {
  return record.steps.filter((s) => s.status === status).map((s) => s.name);
}

/** An operator's summary of an order left in `Error`: why, and which effects are or may be applied. */
export function errorSummary(record: StateRecord): string {
  const list = (names: readonly string[]) => (names.length > 0 ? names.join(", ") : "none");
  const why = record.lastError ? `${record.lastError.code}: ${record.lastError.message}` : "failed";
  return `${why}; completed: ${list(stepsIn(record, "Completed"))}; in doubt: ${list(stepsIn(record, "InDoubt"))}`;
}

export function stepOf(record: StateRecord, step: StepName): StepState | undefined {
  return record.steps.find((s) => s.name === step);
}

/** Drops store metadata (`_etag` and the like) so only the record's own fields are written back. */
export function withoutStoreMetadata(record: StateRecord): StateRecord {
  const { _etag, ...rest } = record as StoredStateRecord;
  void _etag;
  return rest;
}

/** parseStateRecord through the schema alone: upgrades, defaults and every issue of a record that needs them. */
export function parseStateRecordBySchema(input: unknown): Result<StateRecord, ValidationError> {
  return validateVersioned(
    "state record",
    stateRecordSchema,
    STATE_SCHEMA_VERSION,
    input,
    STATE_RECORD_UPGRADES,
  );
}
