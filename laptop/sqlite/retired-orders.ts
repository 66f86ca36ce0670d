import type { Statement } from "better-sqlite3";
import { z } from "zod";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import { type RetiredOrder, retiredOrderSchema } from "../../src/domain/retired-order.js";
import type { IsoInstant } from "../../src/domain/time.js";
import { validate } from "../../src/domain/validation.js";

/**
 * The tombstones of the orders whose record retention deleted: a table of their own, which no query of
 * the records reads. One row per order, written in the transaction that deletes its record.
 */
export const RETIRED_ORDER_QUERIES = {
  /** The tombstone of the record as it is now, if it still has the ETag read: nothing otherwise. */
  keep: `INSERT INTO retired_orders (order_id, final_state, attempt, retired_at, purged_at, reply_to, reply_to_kept)
     SELECT order_id, process_state, json_extract(document, '$.attempt'), updated_at, ?,
       json_extract(document, '$.replyTo'), 1
     FROM state_records WHERE order_id = ? AND etag = ?
     ON CONFLICT (order_id) DO UPDATE SET final_state = excluded.final_state, attempt = excluded.attempt,
       retired_at = excluded.retired_at, purged_at = excluded.purged_at, reply_to = excluded.reply_to,
       reply_to_kept = excluded.reply_to_kept`,
  get: `SELECT order_id, final_state, attempt, retired_at, purged_at, reply_to, reply_to_kept
     FROM retired_orders WHERE order_id = ?`,
};

/** The columns of a row as stored; `reply_to_kept` is 0 on a row written before tombstones kept `replyTo`. */
const tombstoneRowSchema = z.strictObject({
  order_id: z.string(),
  final_state: z.unknown(),
  attempt: z.unknown(),
  retired_at: z.unknown(),
  purged_at: z.unknown(),
  reply_to: z.unknown(),
  reply_to_kept: z.union([z.literal(0), z.literal(1)]),
});

/**
 * Retention's delete on SQLite: the tombstone and the delete in one immediate transaction, both
 * conditional on the same ETag, so a crash leaves the record (and maybe its tombstone), never neither.
 */
export class SqliteRetiredOrders {
  private readonly selectOne: Statement<[string], unknown>;
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
    return row === undefined ? undefined : tombstoneOf(orderId, row);
  }
}

/** The tombstone a row holds, every value checked (F24-10): a row that is not one fails, naming it. */
function tombstoneOf(orderId: string, row: unknown): RetiredOrder {
  const subject = `retired_orders row of order ${JSON.stringify(orderId)}`;
  const columns = validate(subject, tombstoneRowSchema, row);
  if (!columns.ok) throw columns.error;
  const { order_id, final_state, attempt, retired_at, purged_at, reply_to, reply_to_kept } = columns.value;
  const tombstone = validate(subject, retiredOrderSchema, {
    orderId: order_id,
    finalState: final_state,
    attempt,
    retiredAt: retired_at,
    purgedAt: purged_at,
    ...(reply_to_kept === 1 ? { replyTo: reply_to } : {}),
  });
  if (!tombstone.ok) throw tombstone.error;
  return tombstone.value;
}
