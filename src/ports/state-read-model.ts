import type { ProcessState, StoredStateRecord } from "../domain/state-record.js";
import type { IsoInstant } from "../domain/time.js";
import type { Page, PageRequest } from "./state-store.js";

/**
 * Records newest change first (`updatedAt`, then `orderId`, both descending), in one process state or
 * in all: the operator's view. A live view, not a snapshot: a record that changes while you page moves
 * to the front, so a later page does not show it again (and may not show it at all).
 */
export interface RecentQuery extends PageRequest {
  readonly state: ProcessState | null;
}

/** A waiting record's key, and when it was accepted or last made progress: what `oldestPending` answers. */
export interface WaitingRecord {
  readonly orderId: string;
  readonly progressAt: IsoInstant;
}

/** Orders finished in one clock minute (UTC), in one terminal state: what `countFinishedPerMinute` answers. */
export interface FinishedInMinute {
  /** The minute as its instant's first 16 characters, `YYYY-MM-DDTHH:MM` (UTC). */
  readonly minute: string;
  readonly processState: ProcessState;
  readonly count: number;
}

export interface WorkflowVersionCount {
  readonly workflowVersion: number;
  readonly processState: ProcessState;
  readonly count: number;
}

/**
 * The state records as the operator surface reads them: the orders API's list and counts, the
 * statistics, the metric of orders per state. Reads only; the records are written through `StateStore`.
 */
export interface StateReadModel {
  /** How many records are in `state` now. */
  countInState(state: ProcessState): Promise<number>;
  /** How many records are in each process state now (every state present, zero included). */
  countByState(): Promise<Readonly<Record<ProcessState, number>>>;
  /**
   * How many records in each of `states` are pinned to each workflow version: one entry per pair with
   * at least one record, in no promised order. What tells an operator a version is still needed.
   */
  countByWorkflowVersion(states: readonly ProcessState[]): Promise<readonly WorkflowVersionCount[]>;
  /**
   * The `Pending` record that has waited longest since it was accepted or last made progress
   * (`progressAt`, ties by `orderId` where the store orders them), or null when none is `Pending`. Not
   * by its last change: a deferral, a recovery or a claim given back moves `updatedAt` of an order that
   * has not moved on (F24-4). One indexed read.
   */
  oldestPending(): Promise<WaitingRecord | null>;
  /**
   * How many records are now in a terminal state (`TERMINAL_STATES`) and changed last at or after `from`
   * and before `to`: orders finished in that window, counted by their last change, so one that an
   * operator has since moved out of its terminal state no longer counts.
   */
  countFinishedBetween(from: IsoInstant, to: IsoInstant): Promise<number>;
  /**
   * The records `countFinishedBetween` counts for [`from`, `to`), per clock minute of their last change
   * and terminal state: one entry per pair with at least one record, in no promised order. What the
   * dashboard's chart of orders finished per minute over the last hour is drawn from.
   */
  countFinishedPerMinute(from: IsoInstant, to: IsoInstant): Promise<readonly FinishedInMinute[]>;
  listRecent(query: RecentQuery): Promise<Page<StoredStateRecord>>;
}
