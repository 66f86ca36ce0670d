import { performance } from "node:perf_hooks";
import type { StoredStateRecord } from "../../domain/state-record.js";
import type { ExpiredQuery, Page } from "../../ports/state-store.js";
import { checkPageSize, decodeCursor, encodeCursor } from "./keyset-cursor.js";
import { type Meter, newMeter } from "./query-all.js";
import { type EntryKey, indexedDeadline, type RecoveryEntry, type RecoveryIndex } from "./recovery-index.js";

/** What the scan needs of the state store besides the index. */
export interface ExpiredScanSource {
  readonly index: RecoveryIndex;
  /** A point read of one record. */
  readRecord(orderId: string, meter: Meter): Promise<StoredStateRecord | undefined>;
  /**
   * Writes the record back as read, conditional on its ETag, through the write path that keeps its
   * entry right; a record changed meanwhile is left to the writer that changed it.
   */
  rewrite(record: StoredStateRecord, meter: Meter): Promise<void>;
}

interface Found {
  readonly record: StoredStateRecord;
  readonly entry: RecoveryEntry;
}

/**
 * The expired query answered from the recovery index (docs/recovery-index.md). Entries due by `now` are
 * read in `(completeBy, orderId)` order, each record is read by id, and a record is returned only when
 * its entry agrees with it: it can expire and its deadline is the entry's. Any other entry is repaired
 * on the way by writing its record back, which deletes the entry of a record that can no longer expire
 * and moves an early one to the record's deadline, where this scan meets it again if it has passed.
 *
 * The continuation token is the key of the last entry returned. An entry that agrees with its record
 * keeps its key while the record matches (only writes that change the deadline move it), so a record
 * that matches for the whole scan is returned once, in deadline order.
 */
export async function scanExpired(
  source: ExpiredScanSource,
  query: ExpiredQuery,
): Promise<Page<StoredStateRecord>> {
  checkPageSize(query.maxItems);
  const cursor = query.continuationToken ? decodeCursor(query.continuationToken, "expired") : null;
  const meter = newMeter();
  const started = performance.now();
  // One match more than asked tells whether another page exists, so the last page ends with no token.
  const wanted = query.maxItems + 1;
  const found: Found[] = [];
  let after: EntryKey | null = cursor ? { completeBy: cursor.sortKey, orderId: cursor.orderId } : null;
  let more = true;
  while (more && found.length < wanted) {
    const limit = wanted - found.length;
    const entries = await source.index.due(query.now, after, limit, meter);
    more = entries.length === limit;
    const records = await Promise.all(entries.map((entry) => source.readRecord(entry.orderId, meter)));
    for (const [i, entry] of entries.entries()) {
      after = entry;
      const record = records[i];
      if (record && indexedDeadline(record) === entry.completeBy) {
        found.push({ record, entry });
        if (found.length === wanted) break;
      } else if (await repair(source, entry, record, query.now, meter)) {
        // The entry may now sit later in this batch, which was read before: read on from here.
        more = true;
        break;
      }
    }
  }
  const items = found.slice(0, query.maxItems);
  const last = items[items.length - 1];
  const continuationToken =
    found.length > query.maxItems && last
      ? encodeCursor({ query: "expired", sortKey: last.entry.completeBy, orderId: last.entry.orderId })
      : null;
  return {
    items: items.map((f) => f.record),
    continuationToken,
    cost: {
      requestUnits: meter.requestUnits,
      itemsReturned: items.length,
      documentsRead: meter.documentsRead,
      durationMs: performance.now() - started,
    },
  };
}

/**
 * Brings an entry that disagrees with its record in line. Returns true when the entry may have moved to
 * a later key that is still due by `now`: its record has a deadline that has passed.
 */
async function repair(
  source: ExpiredScanSource,
  entry: RecoveryEntry,
  record: StoredStateRecord | undefined,
  now: string,
  meter: Meter,
): Promise<boolean> {
  if (record === undefined) {
    // Only retired records are ever deleted (retention), and they hold no entry: this is the entry of a
    // create that failed after writing it.
    await source.index.removeIfUnchanged(entry, meter);
    return false;
  }
  await source.rewrite(record, meter);
  const deadline = indexedDeadline(record);
  return deadline !== null && deadline <= now;
}
