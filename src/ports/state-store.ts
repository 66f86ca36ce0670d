import type { Result } from "../domain/result.js";
import type { RetiredOrder } from "../domain/retired-order.js";
import type { StateRecord, StoredStateRecord } from "../domain/state-record.js";
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
 * An order's tombstone (`retiredOrderSchema`): what is kept of it once retention may delete its record (a
 * `Processed` or `Compensated` record, RETENTION_DAYS after its last change). It is tiny and never
 * expires, as the orders database keeps the order itself for ever, so a resend of the order, however
 * late, is known as a duplicate of a finished order instead of being run again.
 */
export type { RetiredOrder };

export type CreateResult =
  | { readonly created: true; readonly record: StoredStateRecord }
  | { readonly created: false; readonly existing: StoredStateRecord };

/**
 * The state store as the workflow's roles use it: one record per order, keyed by `orderId`, read and
 * written by the Scheduler, the Agents' activities and the Supervisor. Every update is conditional on
 * the ETag the caller read, so a writer that lost a race learns it and writes nothing. The operator's
 * reads are `StateReadModel`'s, retention's deletes `RetentionStore`'s.
 *
 * Paged queries are keyset-ordered on fields that do not change while a record matches, so a record
 * that matches for the whole scan is returned exactly once however other records change between pages.
 */
export interface StateStore {
  get(orderId: string): Promise<StoredStateRecord | undefined>;
  /**
   * The tombstone of an order whose record retention deleted (see `RetiredOrder`), or undefined. A store
   * whose records expire with no hook (Cosmos DB's time to live) keeps it from the write that retired the
   * record, so it may answer while the record is still there: ask only after `get` found no record. A
   * tombstone is never a record: no query, count or listing of records shows one.
   */
  getRetired(orderId: string): Promise<RetiredOrder | undefined>;
  /** Creates the record unless one with its `orderId` exists; then returns the existing one untouched. */
  createIfAbsent(record: StateRecord): Promise<CreateResult>;
  /** Replaces the record only if it still has ETag `ifMatch`. */
  replace(
    record: StateRecord,
    ifMatch: string,
  ): Promise<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>>;
  /** The starter's next orders to claim (see `ClaimableQuery`). */
  queryClaimable(query: ClaimableQuery): Promise<Page<StoredStateRecord>>;
  /** How many records are `Processing` now: the starter's admission control. */
  countProcessing(): Promise<number>;
  /** The Supervisor's expired attempts (see `ExpiredQuery`). */
  queryExpired(query: ExpiredQuery): Promise<Page<StoredStateRecord>>;
}
