import type { PartnerLedger } from "../../../partner/ledger.js";
import { EFFECT_OPERATIONS } from "../../../partner/operations.js";
import { isTerminal, type StateRecord } from "../../../src/domain/state-record.js";
import { checkInvariants, type InvariantInput } from "../oracles/invariants.js";

/** What a chaos run is judged on: read from the host's database and the partner's ledger file. */
export interface ChaosEvidence extends Omit<InvariantInput, "submitted"> {
  /** Every order the API answered 202 for. `records` may hold more: POSTs whose answer a kill cut off. */
  readonly accepted: readonly string[];
}

/**
 * The invariants every run must keep (invariants.ts), and what crashes and outages must not change:
 * every record is terminal; at most one effect per order and operation; a Processed order holds each
 * effect once and none undone; a Compensated one holds none; every Error and CompensationFailed order
 * was refused for good by the partner, as its record says and the partner's ledger confirms, never
 * left there by a crash or an outage. No operator acts during a run, so no other cause is accepted.
 */
export function checkChaos(evidence: ChaosEvidence): string[] {
  const violations = [...checkInvariants({ ...evidence, submitted: evidence.accepted }).violations];
  const add = (message: string) => {
    if (violations.length < 100) violations.push(message);
  };
  for (const [orderId, record] of evidence.records) {
    if (!isTerminal(record.processState)) add(`${orderId} is stuck in ${record.processState}`);
    for (const problem of effectProblems(record, evidence.ledger)) add(`${orderId}: ${problem}`);
    const problem = unrefused(record, evidence.ledger);
    if (problem) add(`${orderId} is ${record.processState} ${problem}`);
  }
  for (const orderId of Object.keys(evidence.ledger.effectsByOrder)) {
    if (!evidence.records.has(orderId))
      add(`${orderId}: the partner applied effects for an order with no record`);
  }
  return violations;
}

/** Why an Error or CompensationFailed record was not stopped by a refusal the partner really made. */
function unrefused(record: StateRecord, ledger: PartnerLedger): string | undefined {
  if (record.processState !== "Error" && record.processState !== "CompensationFailed") return undefined;
  const kind = record.lastError?.kind;
  if (kind !== "permanent")
    return `because of ${kind ?? "nothing"} (${record.lastError?.code ?? "no code"}), not a refusal by the partner`;
  if (ledger.refusalsForOrder(record.orderId) === 0)
    return "for a refusal the partner's ledger does not show";
  return undefined;
}

function effectProblems(record: StateRecord, ledger: PartnerLedger): string[] {
  const effects = ledger.effectsByOrder[record.orderId] ?? [];
  const problems: string[] = [];
  // The order's own steps: another version's steps are invariant 8's to report.
  const own = EFFECT_OPERATIONS.filter((operation) => record.steps.some((step) => step.name === operation));
  for (const operation of own) {
    const applied = effects.filter((e) => e.operation === operation);
    const live = applied.filter((e) => !e.undone).length;
    if (applied.length > 1) problems.push(`${operation} applied ${applied.length} times`);
    if (record.processState === "Processed" && (applied.length !== 1 || live !== 1))
      problems.push(`Processed, but ${operation} is applied ${applied.length} time(s), ${live} not undone`);
    if (record.processState === "Compensated" && live > 0)
      problems.push(`Compensated, but ${operation} is still applied at the partner`);
  }
  return problems;
}
