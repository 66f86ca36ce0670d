import type { StateRecord } from "../domain/state-record.js";

/** What one Supervisor scan reports: what it found, what it did, and what it cost. */
export interface ScanReport {
  /** Another Supervisor held the lease: this one did nothing. */
  readonly skipped: boolean;
  readonly pages: number;
  readonly scanned: number;
  /** Back to `Pending` for another attempt, or compensations handed back for another attempt. */
  readonly resets: number;
  readonly toError: number;
  /** Orders past the recovery limit handed to a compensation (`ON_RECOVERIES_EXHAUSTED=compensate`). */
  readonly toCompensation: number;
  /** Compensations past their recovery limit, moved to `CompensationFailed`. */
  readonly stalled: number;
  /** Records someone else changed between the query and the update: left alone. */
  readonly lostRaces: number;
  /** Of the resets, attempts interrupted by their host: recovered with no failure counted. */
  readonly spared: number;
  /** Attempts whose orchestration was still running (its host held it up): given their deadline again. */
  readonly extended: number;
  /** Attempts just past their deadline whose orchestration is about to time them out: left for it. */
  readonly waiting: number;
  /** Attempts whose orchestration could not be asked about (no durable client): left, uncharged (F24-9). */
  readonly unjudged: number;
  /** Attempts whose orchestration an operator suspended: left alone until resumed or terminated (F24-9). */
  readonly suspended: number;
  /** True when the page budget ran out before the query did; the next scan continues. */
  readonly truncated: boolean;
  /** True when the lease could not be renewed during the scan: the scan stopped before its next update. */
  readonly leaseLost: boolean;
  readonly requestUnits: number;
  readonly durationMs: number;
}

/** A scan that did nothing: what a skipped tick reports, and where a scan's counts start. */
export const NOTHING: Omit<ScanReport, "skipped"> = {
  pages: 0,
  scanned: 0,
  resets: 0,
  toError: 0,
  toCompensation: 0,
  stalled: 0,
  lostRaces: 0,
  spared: 0,
  extended: 0,
  waiting: 0,
  unjudged: 0,
  suspended: 0,
  truncated: false,
  leaseLost: false,
  requestUnits: 0,
  durationMs: 0,
};

/** The counts of a scan under way. */
export type ScanCounts = { -readonly [K in keyof typeof NOTHING]: (typeof NOTHING)[K] };

export type RecoveryCounts = Pick<
  ScanCounts,
  | "resets"
  | "toError"
  | "toCompensation"
  | "stalled"
  | "lostRaces"
  | "spared"
  | "extended"
  | "waiting"
  | "unjudged"
  | "suspended"
>;

/**
 * What a recovery did: another attempt (`retry`, a compensation handed back included), a compensation
 * begun past the recovery limit, a compensation past its own (`stalled`), or `Error` for an operator.
 */
export type RecoveryKind = "retry" | "compensate" | "stalled" | "error";

/** What a recovery did, as its counts and the `sas.recovery` attribute name it. */
export function recoveryKind(before: StateRecord, after: StateRecord): RecoveryKind {
  if (after.processState === "Pending") return "retry";
  if (after.processState === "Compensating")
    return before.processState === "Compensating" ? "retry" : "compensate";
  return after.processState === "CompensationFailed" ? "stalled" : "error";
}
