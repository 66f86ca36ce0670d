import type { EffectEntry, PartnerLedger } from "../../../partner/partner-service.js";
import { hasPassed } from "../../../src/domain/deadline-rules.js";
import { isTerminal, type StateRecord } from "../../../src/domain/state-record.js";
import { TRANSITIONS } from "../../../src/domain/transition-table.js";
import { workflowOf } from "../../../src/domain/workflow.js";
import type { AuditedWrite } from "./state-audit.js";

export interface InvariantInput {
  /** Every order id the run submitted (valid messages only). */
  readonly submitted: readonly string[];
  /** Final records, by order id. */
  readonly records: ReadonlyMap<string, StateRecord>;
  /** Order ids whose message was dead-lettered, with the reason. */
  readonly deadLettered: ReadonlyMap<string, string>;
  readonly writes: readonly AuditedWrite[];
  readonly ledger: PartnerLedger;
  readonly maxRecoveries: number;
  /** ON_RECOVERIES_EXHAUSTED: past the limit, `Error`, or a compensation. */
  readonly onExhausted: "error" | "compensate";
}

export interface InvariantReport {
  readonly ok: boolean;
  readonly violations: string[];
}

/** Failure codes that name a cause of their own, whatever their kind: a limit on recoveries or on deferrals. */
const RECOVERY_LIMITS = ["RecoveriesExhausted", "CompensationRecoveriesExhausted", "PartnerUnavailable"];

/**
 * The invariants of docs/architecture.md, computed from the stores, the database's own audit of record writes,
 * and the partner's ledger: never from counters the pipeline keeps about itself.
 */
export function checkInvariants(input: InvariantInput): InvariantReport {
  const violations: string[] = [];
  const add = (message: string) => {
    if (violations.length < 100) violations.push(message);
  };

  // 1. Every accepted order ends in exactly one terminal state, or was dead-lettered with a reason.
  for (const orderId of input.submitted) {
    const record = input.records.get(orderId);
    const reason = input.deadLettered.get(orderId);
    if (record && !isTerminal(record.processState)) add(`1: ${orderId} is stuck in ${record.processState}`);
    if (!record && !reason) add(`1: ${orderId} was lost: no record and not dead-lettered`);
    if (!record && reason === "") add(`1: ${orderId} was dead-lettered without a reason`);
  }

  // 2. Every side effect at the partner applied at most once per idempotency key (and per order and operation).
  for (const key of new Set(input.ledger.effectLog.map((effect) => effect.idempotencyKey))) {
    const effects = input.ledger.effectsForKey(key);
    if (effects > 1) add(`2: key ${key} applied ${effects} times`);
  }
  if (input.ledger.duplicateEffects > 0)
    add(`2: ${input.ledger.duplicateEffects} duplicate effects at the partner`);

  // 3. No record changed while another attempt owned it: every write is a move the table allows, by an
  //    owner (kept or released lockedBy), by an unlocked claim, or by a recovery of an expired owner.
  for (const write of input.writes) {
    const problem = illegalWrite(write);
    if (problem) add(`3: ${write.orderId}: ${problem}`);
  }

  // 4. failureCount never passes the limit without the record going to Error (or, by policy, to a compensation).
  const pastLimit = input.onExhausted === "compensate" ? ["Error", "Compensating"] : ["Error"];
  for (const write of input.writes) {
    const { before, after } = write;
    if (after.failureCount > input.maxRecoveries && (before?.failureCount ?? 0) <= input.maxRecoveries) {
      if (!pastLimit.includes(after.processState))
        add(`4: ${write.orderId} passed ${input.maxRecoveries} failures in ${after.processState}`);
    }
  }

  // 5. Partner calls per order never exceed the order's end-to-end budget.
  for (const [orderId, record] of input.records) {
    const calls = input.ledger.callsForOrder(orderId);
    if (calls > record.retryBudget.limit)
      add(`5: ${orderId} cost ${calls} partner calls, budget ${record.retryBudget.limit}`);
  }

  for (const [orderId, record] of input.records) {
    // 6. Every order left for an operator names its cause: a refusal, a spent budget, a recovery limit, an operator.
    const cause = causeOf(record);
    if (cause) add(`6: ${orderId} is ${record.processState} ${cause}`);
    // 7. Every step that applied or may have applied its effect is in the compensation log.
    for (const step of record.steps) {
      const mayBeApplied = ["InDoubt", "Completed", "Compensated", "CompensationFailed"].includes(
        step.status,
      );
      if (mayBeApplied && !record.compensationLog.some((entry) => entry.step === step.name))
        add(`7: ${orderId}: ${step.name} is ${step.status} but not in the compensation log`);
    }
    // 8. Every order ran the steps of the workflow version it was accepted under, and no other.
    const problem = versionProblem(record, input.ledger.effectsByOrder[orderId] ?? []);
    if (problem) add(`8: ${orderId}: ${problem}`);
  }
  return { ok: violations.length === 0, violations };
}

function versionProblem(record: StateRecord, effects: readonly EffectEntry[]): string | undefined {
  const steps: readonly string[] = workflowOf(record.workflowVersion).steps;
  const names = record.steps.map((step) => step.name);
  if (names.join() !== steps.join())
    return `has steps ${names.join(", ")}, but version ${record.workflowVersion} has ${steps.join(", ")}`;
  const foreign = effects.filter((effect) => !steps.includes(effect.operation));
  if (foreign.length > 0) {
    const operations = foreign.map((effect) => effect.operation).join(", ");
    return `the partner applied ${operations}, not a step of version ${record.workflowVersion}`;
  }
  return undefined;
}

/** Why an `Error` or `CompensationFailed` record fails invariant 6, or undefined when its cause is named. */
function causeOf(record: StateRecord): string | undefined {
  if (record.processState !== "Error" && record.processState !== "CompensationFailed") return undefined;
  const failure = record.lastError;
  if (!failure) return "with no lastError";
  const named =
    failure.kind === "permanent" ||
    failure.kind === "budget" ||
    failure.kind === "operator" ||
    RECOVERY_LIMITS.includes(failure.code);
  return named ? undefined : `with a cause that is not its own (${failure.kind} ${failure.code})`;
}

function illegalWrite({ before, after }: AuditedWrite): string | undefined {
  if (before === null)
    return after.processState === "Pending" ? undefined : `created in ${after.processState}`;
  if (before.processState === after.processState && before.lockedBy === after.lockedBy) {
    return before.lockedBy === null && before.processState !== "Pending" && before.processState !== "Error"
      ? `changed while ${before.processState} and unowned`
      : undefined;
  }
  const allowed = TRANSITIONS.some((rule) => {
    if (rule.from !== before.processState || !rule.to.includes(after.processState)) return false;
    if (rule.fence === "unlocked") return before.lockedBy === null;
    if (rule.command === "releaseClaim")
      return after.lastErrorCode === "StartFailed" && before.lockedBy !== null;
    // A deferral for an open circuit breaker says so; anything else leaving Processing early is not one.
    if (rule.command === "defer" && rule.from === "Processing")
      return after.lastErrorCode === "PartnerUnavailable" && before.lockedBy !== null;
    if (rule.fence === "owner")
      return before.lockedBy !== null && (after.lockedBy === before.lockedBy || after.lockedBy === null);
    return (
      before.lockedBy !== null && hasPassed(before.completeBy, after.updatedAt) && after.lockedBy === null
    );
  });
  return allowed
    ? undefined
    : `${before.processState} (${before.lockedBy ?? "unlocked"}) -> ${after.processState} (${after.lockedBy ?? "unlocked"}) fits no rule`;
}
