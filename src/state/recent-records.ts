import type { Result } from "../domain/result.js";
import { type StateRecord, type StoredStateRecord, TERMINAL_STATES } from "../domain/state-record.js";
import type { CreateResult, StateStore } from "../ports/state-store.js";
import type { NotFoundError, PreconditionFailedError } from "../ports/store-errors.js";

/** A store that can say which version of a record this process last read or wrote, possibly out of date. */
export interface RecentRecordSource {
  recent(orderId: string): StoredStateRecord | undefined;
}

export function hasRecentRecords(states: StateStore): states is StateStore & RecentRecordSource {
  return "recent" in states && typeof states.recent === "function";
}

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATES);

/**
 * A state store that remembers the last version of each record in flight that passed through it, so an
 * update can start from the version this process wrote a moment ago instead of reading it again
 * (record-updates.ts): one store read fewer per activity, and on Cosmos DB one request fewer. Nothing
 * is decided on a remembered version alone: the update's conditional write proves it current, and any
 * other outcome is judged again on the stored record. Reads (`get`) always go to the store.
 */
export class RecentRecords implements StateStore, RecentRecordSource {
  private readonly kept = new Map<string, StoredStateRecord>();

  constructor(
    private readonly inner: StateStore,
    private readonly capacity = 4_096,
  ) {}

  recent(orderId: string): StoredStateRecord | undefined {
    return this.kept.get(orderId);
  }

  async get(orderId: string): Promise<StoredStateRecord | undefined> {
    const record = await this.inner.get(orderId);
    this.keep(orderId, record);
    return record;
  }

  async createIfAbsent(record: StateRecord): Promise<CreateResult> {
    const result = await this.inner.createIfAbsent(record);
    this.keep(record.orderId, result.created ? result.record : result.existing);
    return result;
  }

  async replace(
    record: StateRecord,
    ifMatch: string,
  ): Promise<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>> {
    const result = await this.inner.replace(record, ifMatch);
    this.keep(record.orderId, result.ok ? result.value : undefined);
    return result;
  }

  getRetired: StateStore["getRetired"] = (orderId) => this.inner.getRetired(orderId);
  queryClaimable: StateStore["queryClaimable"] = (query) => this.inner.queryClaimable(query);
  queryExpired: StateStore["queryExpired"] = (query) => this.inner.queryExpired(query);
  countProcessing: StateStore["countProcessing"] = () => this.inner.countProcessing();

  /** Keeps records that will be updated again; the oldest kept is forgotten first. */
  private keep(orderId: string, record: StoredStateRecord | undefined): void {
    this.kept.delete(orderId);
    if (!record || TERMINAL.has(record.processState)) return;
    this.kept.set(orderId, record);
    if (this.kept.size > this.capacity) {
      const oldest = this.kept.keys().next().value;
      if (oldest !== undefined) this.kept.delete(oldest);
    }
  }
}
