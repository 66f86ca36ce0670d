import { z } from "zod";
import { PROCESS_STATES } from "./process-state.js";
import { isoInstantSchema } from "./time.js";
import { integer, oneOf, text } from "./validation.js";

/**
 * The tombstone of an order whose record retention deleted (docs/architecture.md, "Tombstones"), as every
 * store answers it, checked when read back: a store's values are not taken on trust.
 */
export const retiredOrderSchema = z.strictObject({
  orderId: text(1, 64),
  /** The state the order ended in (`Processed` or `Compensated`). */
  finalState: oneOf(PROCESS_STATES),
  /** Its last attempt: the status messages it was last sent carry it. */
  attempt: integer(0, 1_000_000),
  /** When the record reached that state: its last change. */
  retiredAt: isoInstantSchema,
  /**
   * When retention deleted the record. Null where the store deletes it on its own and says nothing (Cosmos
   * DB's time to live): the record is then gone, or due to go, RETENTION_DAYS after `retiredAt`.
   */
  purgedAt: isoInstantSchema.nullable(),
  /**
   * The submitter's status queue the order was accepted with (null: it named none), which a resend must
   * name again to be answered (F24-8). Absent from a tombstone written before tombstones kept it: then
   * nobody can tell whether a resend's `replyTo` is the order's own.
   */
  replyTo: text(1, 260).nullable().optional(),
});

export type RetiredOrder = z.infer<typeof retiredOrderSchema>;
