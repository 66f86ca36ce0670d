import type { PartnerLedger } from "../../../partner/ledger.js";
import { EFFECT_OPERATIONS } from "../../../src/domain/partner-operations.js";
import { isTerminal, PARTNER_UNAVAILABLE, type StateRecord } from "../../../src/domain/state-record.js";
import { checkInvariants, type InvariantInput } from "../oracles/invariants.js";

/** What a chaos run is judged on: read from the host's database and the partner's ledger file. */
export interface ChaosEvidence extends Omit<InvariantInput, "submitted"> {
  /** Every order the API answered 202 for. `records` may hold more: POSTs whose answer a kill cut off. */
  readonly accepted: readonly string[];
  /** The partner's outages, as wall-clock instants (ms since the epoch); none for a run without. */
  readonly outages?: readonly OutageWindow[];
  /** BREAKER_MAX_OPEN_MS: how long after an outage's end a deferral decided during it may be judged. */
  readonly breakerMaxOpenMs?: number;
}

export interface OutageWindow {
  readonly from: number;
  readonly to: number;
}

/**
 * The invariants every run must keep (invariants.ts), and what crashes and outages must not change:
 * every record is terminal; at most one effect per order and operation; a Processed order holds each
 * effect once and none undone; a Compensated one holds none; every Error and CompensationFailed order
 * was refused for good by the partner, as its record says and the partner's ledger confirms, or was
 * parked with PartnerUnavailable after deferring through one of the run's outages for its longest
 * deferral (F24-4): never left there by a crash. No operator acts during a run, so no other cause is
 * accepted.
 */
export function checkChaos(evidence: ChaosEvidence): string[] {
  const violations = [...checkInvariants({ ...evidence, submitted: evidence.accepted }).violations];
  const add = (message: string) => {
    if (violations.length < 100) violations.push(message);
  };
  for (const [orderId, record] of evidence.records) {
    if (!isTerminal(record.processState)) add(`${orderId} is stuck in ${record.processState}`);
    for (const problem of effectProblems(record, evidence.ledger)) add(`${orderId}: ${problem}`);
    const problem = parkedByOutage(record, evidence) ? undefined : unrefused(record, evidence.ledger);
    if (problem) add(`${orderId} is ${record.processState} ${problem}`);
  }
  for (const orderId of Object.keys(evidence.ledger.effectsByOrder)) {
    if (!evidence.records.has(orderId))
      add(`${orderId}: the partner applied effects for an order with no record`);
  }
  return violations;
}

/**
 * Parked for an outage: `PartnerUnavailable`, its deferrals begun while the partner was down, and parked
 * before that outage's end plus one longest open period of a breaker (the deferral that judged it).
 */
function parkedByOutage(record: StateRecord, evidence: ChaosEvidence): boolean {
  const failure = record.lastError;
  if (failure?.kind !== "stalled" || failure.code !== PARTNER_UNAVAILABLE || !record.deferredSince)
    return false;
  const since = Date.parse(record.deferredSince);
  const parked = Date.parse(failure.at);
  const slack = evidence.breakerMaxOpenMs ?? 0;
  return (evidence.outages ?? []).some((o) => o.from <= since && since <= o.to && parked <= o.to + slack);
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
