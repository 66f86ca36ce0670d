import type { Container, ItemDefinition, SqlParameter } from "@azure/cosmos";
import type { StateRecord } from "../../domain/state-record.js";
import type { IsoInstant } from "../../domain/time.js";
import { chargeOf, statusOf } from "./cosmos-errors.js";
import { type Meter, readAll } from "./query-all.js";

/**
 * One entry of the recovery index: a record that may expire, and a deadline no later than its own
 * (docs/recovery-index.md). `etag` is the entry's, for conditional writes.
 */
export interface RecoveryEntry {
  readonly orderId: string;
  readonly completeBy: IsoInstant;
  readonly etag: string;
}

/** A position in the index's order, `(completeBy, orderId)`: a page resumes after it. */
export interface EntryKey {
  readonly completeBy: string;
  readonly orderId: string;
}

/**
 * The deadline the index must cover for a record: its `completeBy` while it is `Processing` or
 * `Compensating` (the records the expired query matches), none otherwise.
 */
export function indexedDeadline(record: Pick<StateRecord, "processState" | "completeBy">): IsoInstant | null {
  const matchable = record.processState === "Processing" || record.processState === "Compensating";
  return matchable ? record.completeBy : null;
}

/** Writers that keep changing one entry make `lowerTo` give up after this many reads. */
const MAX_ATTEMPTS = 10;

/**
 * The recovery index container: reads, and writes conditional on an entry's ETag. It knows nothing of
 * the records; `indexed-write.ts` orders its writes around theirs.
 */
export class RecoveryIndex {
  constructor(private readonly container: Container) {}

  async read(orderId: string, meter: Meter): Promise<RecoveryEntry | undefined> {
    const response = await this.container.item(orderId, orderId).read();
    meter.requestUnits += response.requestCharge;
    if (response.resource === undefined) return undefined;
    meter.documentsRead++;
    return toEntry(response.resource);
  }

  /**
   * Makes the entry's deadline no later than `deadline`: creates the entry, or lowers it, and writes it
   * even when it is already early enough, so that a writer holding its previous ETag fails (a removal
   * decided before this call must not take effect after it). Returns the entry as written.
   */
  async lowerTo(
    orderId: string,
    deadline: IsoInstant,
    meter: Meter,
    likelyAbsent = false,
  ): Promise<RecoveryEntry> {
    // A record that could not expire usually has no entry: try the create first, read only if one is there.
    const created = likelyAbsent ? await this.createIfAbsent(orderId, deadline, meter) : undefined;
    if (created) return created;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.read(orderId, meter);
      const written = current
        ? await this.replaceIfUnchanged(current, earlier(current.completeBy, deadline), meter)
        : await this.createIfAbsent(orderId, deadline, meter);
      if (written) return written;
    }
    throw new Error(`recovery entry ${orderId} changed on every one of ${MAX_ATTEMPTS} attempts`);
  }

  /** Sets the entry's deadline if the entry is still as read; undefined if it changed or is gone. */
  async replaceIfUnchanged(
    entry: RecoveryEntry,
    completeBy: IsoInstant,
    meter: Meter,
  ): Promise<RecoveryEntry | undefined> {
    try {
      const response = await this.container
        .item(entry.orderId, entry.orderId)
        .replace(document(entry.orderId, completeBy), {
          accessCondition: { type: "IfMatch", condition: entry.etag },
        });
      meter.requestUnits += response.requestCharge;
      return toEntry(response.resource);
    } catch (error) {
      meter.requestUnits += chargeOf(error);
      if (statusOf(error) === 412 || statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  /** Deletes the entry if it is still as read; false if it changed or is gone. */
  async removeIfUnchanged(entry: RecoveryEntry, meter: Meter): Promise<boolean> {
    try {
      const response = await this.container
        .item(entry.orderId, entry.orderId)
        .delete({ accessCondition: { type: "IfMatch", condition: entry.etag } });
      meter.requestUnits += response.requestCharge;
      return true;
    } catch (error) {
      meter.requestUnits += chargeOf(error);
      if (statusOf(error) === 412 || statusOf(error) === 404) return false;
      throw error;
    }
  }

  /** Every entry: for the audit, as the index holds the orders in flight, not the history. */
  async all(meter: Meter): Promise<RecoveryEntry[]> {
    const found = await readAll<unknown>(this.container, "SELECT * FROM c", meter);
    return found.map(toEntry);
  }

  /**
   * Entries whose deadline is at or before `now` and whose key comes after `after`, in key order, at
   * most `limit` of them.
   */
  async due(now: IsoInstant, after: EntryKey | null, limit: number, meter: Meter): Promise<RecoveryEntry[]> {
    const conditions = ["c.completeBy <= @now"];
    const parameters: SqlParameter[] = [
      { name: "@now", value: now },
      { name: "@limit", value: limit },
    ];
    if (after) {
      conditions.push("(c.completeBy > @afterKey OR (c.completeBy = @afterKey AND c.orderId > @afterId))");
      parameters.push(
        { name: "@afterKey", value: after.completeBy },
        { name: "@afterId", value: after.orderId },
      );
    }
    const iterator = this.container.items.query(
      {
        // Must match the container's composite index, path for path.
        query: `SELECT TOP @limit * FROM c WHERE ${conditions.join(" AND ")} ORDER BY c.completeBy, c.orderId`,
        parameters,
      },
      { maxItemCount: limit },
    );
    const resources: unknown[] = [];
    // Cosmos DB may answer a round trip with fewer items than asked (or none); keep fetching.
    do {
      const response = await iterator.fetchNext();
      meter.requestUnits += response.requestCharge;
      resources.push(...response.resources);
    } while (resources.length < limit && iterator.hasMoreResults());
    meter.documentsRead += resources.length;
    return resources.map(toEntry);
  }

  private async createIfAbsent(
    orderId: string,
    completeBy: IsoInstant,
    meter: Meter,
  ): Promise<RecoveryEntry | undefined> {
    try {
      const response = await this.container.items.create(document(orderId, completeBy), {
        disableAutomaticIdGeneration: true,
      });
      meter.requestUnits += response.requestCharge;
      return toEntry(response.resource);
    } catch (error) {
      meter.requestUnits += chargeOf(error);
      if (statusOf(error) === 409) return undefined;
      throw error;
    }
  }
}

function document(orderId: string, completeBy: IsoInstant): ItemDefinition {
  return { id: orderId, orderId, completeBy };
}

function earlier(a: IsoInstant, b: IsoInstant): IsoInstant {
  return a <= b ? a : b;
}

function toEntry(resource: unknown): RecoveryEntry {
  const fields = (typeof resource === "object" && resource !== null ? resource : {}) as Record<
    string,
    unknown
  >;
  const { id, orderId, completeBy, _etag } = fields;
  if (
    typeof orderId !== "string" ||
    id !== orderId ||
    typeof completeBy !== "string" ||
    typeof _etag !== "string"
  ) {
    throw new Error(`recovery entry ${String(id)} is not { id = orderId, orderId, completeBy }`);
  }
  return { orderId, completeBy: completeBy as IsoInstant, etag: _etag };
}
