import type { Result } from "../domain/result.js";
import type { ProcessState, StateRecord, StoredStateRecord } from "../domain/state-record.js";
import type { IsoInstant } from "../domain/time.js";
import type { NotFoundError, PreconditionFailedError } from "./store-errors.js";

/** What one page of a query cost the store. Cosmos DB reports request units; other stores report zero. */
export interface QueryCost {
  readonly requestUnits: number;
  readonly itemsReturned: number;
  /**
   * Documents the store read to answer: the items returned, and whatever else it had to read for them
   * (an index's entries, point reads, a look-ahead item that tells whether another page exists).
   */
  readonly documentsRead: number;
  readonly durationMs: number;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Opaque; pass it back with the same query to get the next page. Null when the query is exhausted. */
  readonly continuationToken: string | null;
  readonly cost: QueryCost;
}

export interface PageRequest {
  /** Upper bound on the items of this page (1 to MAX_PAGE_SIZE). */
  readonly maxItems: number;
  /** From the previous page of the same query; a token from another query is refused. */
  readonly continuationToken?: string | null;
}

export const MAX_PAGE_SIZE = 1_000;

/**
 * Unlocked records the starter may claim, whose `notBefore` has passed, oldest `notBefore` first:
 * `Pending` ones, and `Compensating` ones handed back for another compensation attempt.
 */
export interface ClaimableQuery extends PageRequest {
  readonly now: IsoInstant;
}

/**
 * Records in `Processing` or `Compensating` whose `completeBy` has passed (a deadline equal to `now`
 * has passed), however long ago, oldest deadline first. Only owned records have a deadline, so the
 * query reads expired attempts and nothing else; a scan is bounded by its page budget, not by age.
 */
export interface ExpiredQuery extends PageRequest {
  readonly now: IsoInstant;
}

/**
 * Records newest change first (`updatedAt`, then `orderId`, both descending), in one process state or
 * in all: the operator's view. A live view, not a snapshot: a record that changes while you page moves
 * to the front, so a later page does not show it again (and may not show it at all).
 */
export interface RecentQuery extends PageRequest {
  readonly state: ProcessState | null;
}

/** A record's key and the time of its last change: what `oldestInState` answers. */
export interface RecordAge {
  readonly orderId: string;
  readonly updatedAt: IsoInstant;
}

/** Records retention may delete: in a `RETIRED_STATES` state, last changed before `before`. */
export interface RetiredQuery {
  readonly before: IsoInstant;
  /** Upper bound on the records answered (1 to MAX_PAGE_SIZE). */
  readonly maxItems: number;
}

/** What retention needs of a retired record: its key, its attempts (their instances) and its ETag. */
export interface RetiredRecord {
  readonly orderId: string;
  readonly attempt: number;
  readonly updatedAt: IsoInstant;
  readonly etag: string;
}

export type CreateResult =
  | { readonly created: true; readonly record: StoredStateRecord }
  | { readonly created: false; readonly existing: StoredStateRecord };

/**
 * The state store: one record per order, keyed by `orderId`. Every update is conditional on the ETag
 * the caller read, so a writer that lost a race learns it and writes nothing.
 *
 * Paged queries are keyset-ordered on fields that do not change while a record matches, so a record
 * that matches for the whole scan is returned exactly once however other records change between pages.
 */
export interface WorkflowVersionCount {
  readonly workflowVersion: number;
  readonly processState: ProcessState;
  readonly count: number;
}

export interface StateStore {
  get(orderId: string): Promise<StoredStateRecord | undefined>;
  /** Creates the record unless one with its `orderId` exists; then returns the existing one untouched. */
  createIfAbsent(record: StateRecord): Promise<CreateResult>;
  /** Replaces the record only if it still has ETag `ifMatch`. */
  replace(
    record: StateRecord,
    ifMatch: string,
  ): Promise<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>>;
  queryClaimable(query: ClaimableQuery): Promise<Page<StoredStateRecord>>;
  /** How many records are `Processing` now: the starter's admission control. */
  countProcessing(): Promise<number>;
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
   * The record that has been in `state` longest, judged by its last change (`updatedAt`, ties by
   * `orderId` where the store orders them), or null when no record is in `state`. One indexed read.
   */
  oldestInState(state: ProcessState): Promise<RecordAge | null>;
  /**
   * How many records are now in a terminal state (`TERMINAL_STATES`) and changed last at or after `from`
   * and before `to`: orders finished in that window, counted by their last change, so one that an
   * operator has since moved out of its terminal state no longer counts.
   */
  countFinishedBetween(from: IsoInstant, to: IsoInstant): Promise<number>;
  queryExpired(query: ExpiredQuery): Promise<Page<StoredStateRecord>>;
  listRecent(query: RecentQuery): Promise<Page<StoredStateRecord>>;
  /**
   * Up to `maxItems` retired records (see `RetiredQuery`), in no promised order: each call answers those
   * still there, so a caller that deletes what it got asks again for the next batch. One indexed read.
   */
  queryRetired(query: RetiredQuery): Promise<readonly RetiredRecord[]>;
  /** Deletes the record only if it still has ETag `ifMatch`; false if it changed or is gone. */
  remove(orderId: string, ifMatch: string): Promise<boolean>;
}
