import type { IsoInstant } from "../domain/time.js";

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

/** The state records as retention sees them: the retired ones, and their conditional delete. */
export interface RetentionStore {
  /**
   * Up to `maxItems` retired records (see `RetiredQuery`), in no promised order: each call answers those
   * still there, so a caller that deletes what it got asks again for the next batch. One indexed read.
   */
  queryRetired(query: RetiredQuery): Promise<readonly RetiredRecord[]>;
  /**
   * Deletes the record only if it still has ETag `ifMatch`; false if it changed or is gone. In the same
   * write it keeps the order's tombstone (`StateStore.getRetired`: its final state, attempt and last
   * change, and `purgedAt`, the time of the delete; the store's own clock when omitted), so no failure
   * leaves an order with neither.
   */
  remove(orderId: string, ifMatch: string, purgedAt?: IsoInstant): Promise<boolean>;
}
