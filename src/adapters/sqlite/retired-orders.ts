import type { Statement } from "better-sqlite3";
import type { ProcessState } from "../../domain/state-record.js";
import type { IsoInstant } from "../../domain/time.js";
import type { RetiredOrder } from "../../ports/state-store.js";
import type { EmbeddedDatabase } from "./database.js";

/**
 * The tombstones of the orders whose record retention deleted: a table of their own, which no query of
 * the records reads. One row per order, written in the transaction that deletes its record.
 */
export const RETIRED_ORDER_QUERIES = {
  /** The tombstone of the record as it is now, if it still has the ETag read: nothing otherwise. */
  keep: `INSERT INTO retired_orders (order_id, final_state, attempt, retired_at, purged_at)
     SELECT order_id, process_state, json_extract(document, '$.attempt'), updated_at, ?
     FROM state_records WHERE order_id = ? AND etag = ?
     ON CONFLICT (order_id) DO UPDATE SET final_state = excluded.final_state, attempt = excluded.attempt,
       retired_at = excluded.retired_at, purged_at = excluded.purged_at`,
  get: "SELECT order_id, final_state, attempt, retired_at, purged_at FROM retired_orders WHERE order_id = ?",
};

interface TombstoneRow {
  readonly order_id: string;
  readonly final_state: string;
  readonly attempt: number;
  readonly retired_at: string;
  readonly purged_at: string;
}

/**
 * Retention's delete on SQLite: the tombstone and the delete in one immediate transaction, both
 * conditional on the same ETag, so a crash leaves the record (and maybe its tombstone), never neither.
 */
export class SqliteRetiredOrders {
  private readonly selectOne: Statement<[string], TombstoneRow>;
  private readonly removeWithTombstone: (orderId: string, ifMatch: string, purgedAt: IsoInstant) => boolean;

  /** `remove` deletes one record: (orderId, ifMatch), one change when it did. */
  constructor(db: EmbeddedDatabase, remove: Statement<[string, string]>) {
    const keep = db.prepare<[string, string, string]>(RETIRED_ORDER_QUERIES.keep);
    this.selectOne = db.prepare(RETIRED_ORDER_QUERIES.get);
    const transaction = db.transaction((orderId: string, ifMatch: string, purgedAt: IsoInstant) => {
      keep.run(purgedAt, orderId, ifMatch);
      return remove.run(orderId, ifMatch).changes === 1;
    });
    // Immediate: the write lock first, so another connection's write cannot slip between read and write.
    this.removeWithTombstone = (orderId, ifMatch, purgedAt) =>
      transaction.immediate(orderId, ifMatch, purgedAt);
  }

  remove(orderId: string, ifMatch: string, purgedAt: IsoInstant): boolean {
    return this.removeWithTombstone(orderId, ifMatch, purgedAt);
  }

  get(orderId: string): RetiredOrder | undefined {
    const row = this.selectOne.get(orderId);
    if (!row) return undefined;
    return {
      orderId: row.order_id,
      finalState: row.final_state as ProcessState,
      attempt: row.attempt,
      retiredAt: row.retired_at,
      purgedAt: row.purged_at,
    };
  }
}
