import { RETIRED_STATES, type StateRecord, type StoredStateRecord } from "../../domain/state-record.js";
import { parseStateRecord } from "../../domain/state-record-check.js";

/**
 * A state record as stored in Cosmos DB: the record plus the `id` every item must have, and for a
 * retired record the seconds Cosmos DB keeps it after this write (`ttl`; the container's default is -1,
 * never, so a document without one stays).
 */
export type StateDocument = StateRecord & { readonly id: string; readonly ttl?: number };

/**
 * Validates a record before it is written, and gives it `id = orderId` (the partition key too) and, in a
 * `RETIRED_STATES` state, `ttl = retentionSeconds`. A replace writes the whole document, so a record that
 * leaves those states loses its `ttl`; none does today (no command moves a `Processed` or `Compensated`
 * record), and the expiry counts from the last write (`_ts`), which is then the record's `updatedAt`.
 */
export function toDocument(record: StateRecord, retentionSeconds: number | null = null): StateDocument {
  const { _etag, ...fields } = record as StoredStateRecord;
  void _etag;
  const parsed = parseStateRecord(fields);
  if (!parsed.ok) throw parsed.error;
  const retired = retentionSeconds !== null && RETIRED_STATES.includes(parsed.value.processState);
  return { id: parsed.value.orderId, ...parsed.value, ...(retired ? { ttl: retentionSeconds } : {}) };
}

/**
 * The record in a document Cosmos DB returned. Cosmos adds system properties (`_rid`, `_self`, `_ts`,
 * `_attachments`, and others in some responses) that the strict record schema would refuse; no field of
 * the record starts with an underscore, so every such property is dropped and `_etag` is kept apart.
 */
export function fromDocument(resource: unknown): StoredStateRecord {
  if (typeof resource !== "object" || resource === null) {
    throw new Error("Cosmos DB returned no state document");
  }
  const fields: Record<string, unknown> = {};
  let id: unknown;
  let etag: unknown;
  for (const [name, value] of Object.entries(resource)) {
    if (name === "_etag") etag = value;
    else if (name === "id") id = value;
    else if (name !== "ttl" && !name.startsWith("_")) fields[name] = value;
  }
  const parsed = parseStateRecord(fields);
  if (!parsed.ok)
    throw new Error(`state document ${String(id)}: ${parsed.error.message}`, { cause: parsed.error });
  if (id !== parsed.value.orderId) {
    throw new Error(
      `state document ${String(id)} holds order ${parsed.value.orderId}: id must equal orderId`,
    );
  }
  if (typeof etag !== "string") throw new Error(`state document ${String(id)} has no _etag`);
  return { ...parsed.value, _etag: etag };
}
