import type { StoredStateRecord } from "../../domain/state-record.js";
import type { IsoInstant } from "../../domain/time.js";
import { indexedDeadline } from "./recovery-index.js";

/**
 * The recovery deadline of the last version of each record this store read or wrote, by ETag. A replace
 * conditional on that ETag replaces exactly that version, so the writer knows which deadline the
 * recovery index already covers (indexed-write.ts). Bounded: the oldest record seen is forgotten first.
 */
export class KnownDeadlines {
  private readonly versions = new Map<
    string,
    { readonly etag: string; readonly deadline: IsoInstant | null }
  >();

  constructor(private readonly capacity = 10_000) {}

  seen(record: StoredStateRecord): StoredStateRecord {
    this.versions.delete(record.orderId);
    this.versions.set(record.orderId, { etag: record._etag, deadline: indexedDeadline(record) });
    if (this.versions.size > this.capacity) {
      const oldest = this.versions.keys().next().value;
      if (oldest !== undefined) this.versions.delete(oldest);
    }
    return record;
  }

  /** The deadline of the version with this ETag: null if it had none, undefined if that version is not known. */
  deadlineOf(orderId: string, etag: string): IsoInstant | null | undefined {
    const known = this.versions.get(orderId);
    return known?.etag === etag ? known.deadline : undefined;
  }
}
