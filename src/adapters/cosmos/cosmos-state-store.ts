import { performance } from "node:perf_hooks";
import type { Container, SqlParameter } from "@azure/cosmos";
import { err, ok, type Result } from "../../domain/result.js";
import {
  PROCESS_STATES,
  type ProcessState,
  RETIRED_STATES,
  type StateRecord,
  type StoredStateRecord,
  TERMINAL_STATES,
  withoutStoreMetadata,
} from "../../domain/state-record.js";
import { type IsoInstant, toInstant } from "../../domain/time.js";
import { WORKFLOW_VERSIONS } from "../../domain/workflow.js";
import type { RetentionStore, RetiredQuery, RetiredRecord } from "../../ports/retention-store.js";
import type {
  FinishedInMinute,
  RecentQuery,
  StateReadModel,
  WaitingRecord,
  WorkflowVersionCount,
} from "../../ports/state-read-model.js";
import type {
  ClaimableQuery,
  CreateResult,
  ExpiredQuery,
  Page,
  PageRequest,
  QueryCost,
  RetiredOrder,
  StateStore,
} from "../../ports/state-store.js";
import { NotFoundError, PreconditionFailedError } from "../../ports/store-errors.js";
import type { StateContainers } from "./cosmos-client.js";
import { chargeOf, statusOf } from "./cosmos-errors.js";
import { scanExpired } from "./expired-scan.js";
import { type ReplacedVersion, writeIndexed } from "./indexed-write.js";
import { checkPageSize } from "./keyset-cursor.js";
import { KnownDeadlines } from "./known-deadlines.js";
import { type PagedQuery, readPage } from "./paged-query.js";
import { type Meter, newMeter } from "./query-all.js";
import { coverRecordsThatCanExpire } from "./recovery-audit.js";
import { RecoveryIndex } from "./recovery-index.js";
import { type RecordWrite, readTombstone, upsertTombstone, writeWithTombstone } from "./retired-orders.js";
import { fromDocument, type StateDocument, toDocument } from "./state-document.js";
import { countFinishedPerMinute, oldestPending } from "./state-figures.js";

export interface CosmosStateStoreOptions {
  /**
   * How often the expired query first audits the recovery index (`auditRecoveryIndex`), a store's
   * first scan included. One hour unless set; null never (for a database whose records were all written
   * through a store with the index, or to run the audit on another schedule).
   */
  readonly auditEveryMs?: number | null;
  /**
   * Seconds a `Processed` or `Compensated` record stays after its last write: its document's `ttl`
   * (RETENTION_DAYS), written with the order's tombstone (`retired-orders.ts`). Null or absent: no
   * document gets one, nothing expires, and only retention's delete writes a tombstone.
   */
  readonly retentionSeconds?: number | null;
}

/** What an audit of the recovery index did, and what it cost. */
export interface AuditReport {
  /** Records that can expire whose deadline the index did not cover, and now does. */
  readonly covered: number;
  readonly requestUnits: number;
  readonly documentsRead: number;
  readonly durationMs: number;
}

const DEFAULT_AUDIT_EVERY_MS = 3_600_000;

/**
 * The state store on Cosmos DB, behind each of its ports (`StateStore`, `StateReadModel`, `RetentionStore`):
 * one item per order, `id` = `orderId` = partition key (and in its partition, once the order is retired,
 * its tombstone: `retired-orders.ts`), and the Supervisor's recovery index beside it
 * (`recovery-index.ts`), which every write keeps right (`indexed-write.ts`) and the expired query reads
 * instead of the records (`expired-scan.ts`).
 *
 * Pages are keyset-ordered on (`notBefore`, `orderId`), or on the recovery entries' (`completeBy`,
 * `orderId`), and the continuation token is this store's own cursor, not the SDK's. A cursor resumes
 * after the last item returned, whatever changed since, which is the port's exactly-once rule; and a
 * fresh query with `TOP` needs no SDK continuation token, which the SDK accepts for cross-partition
 * ORDER BY queries only with `enableQueryControl`.
 */
export class CosmosStateStore implements StateStore, StateReadModel, RetentionStore {
  private readonly records: Container;
  private readonly index: RecoveryIndex;
  private readonly auditEveryMs: number | null;
  private lastAuditAt: number | null = null;
  private readonly retentionSeconds: number | null;
  private readonly known = new KnownDeadlines();

  constructor(containers: StateContainers, options: CosmosStateStoreOptions = {}) {
    this.records = containers.records;
    this.index = new RecoveryIndex(containers.recovery);
    this.auditEveryMs = options.auditEveryMs === undefined ? DEFAULT_AUDIT_EVERY_MS : options.auditEveryMs;
    this.retentionSeconds = options.retentionSeconds ?? null;
  }

  async get(orderId: string): Promise<StoredStateRecord | undefined> {
    return this.read(orderId, newMeter());
  }

  async getRetired(orderId: string): Promise<RetiredOrder | undefined> {
    return readTombstone(this.records, orderId);
  }

  async createIfAbsent(record: StateRecord): Promise<CreateResult> {
    const document = toDocument(record, this.retentionSeconds);
    const created = await writeIndexed(
      this.index,
      document,
      "create",
      async () => {
        try {
          const { resource } = await this.writeRecord(document, { kind: "create" });
          return { written: true, result: this.known.seen(fromDocument(resource)) };
        } catch (error) {
          if (statusOf(error) !== 409) throw error;
          return { written: false, result: undefined };
        }
      },
      newMeter(),
    );
    if (created) return { created: true, record: created };
    const existing = await this.get(document.orderId);
    if (!existing) throw new Error(`state record ${document.orderId} vanished during create`);
    return { created: false, existing };
  }

  async replace(
    record: StateRecord,
    ifMatch: string,
  ): Promise<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>> {
    return this.replaceMetered(record, ifMatch, newMeter());
  }

  async queryClaimable(query: ClaimableQuery): Promise<Page<StoredStateRecord>> {
    return this.page(
      {
        name: "claimable",
        sortField: "notBefore",
        filter: "c.processState IN ('Pending', 'Compensating') AND c.lockedBy = null AND c.notBefore <= @now",
        parameters: [{ name: "@now", value: query.now }],
        // Two states match, so the due time must lead for "oldest first" across both.
        orderBy: "c.notBefore, c.orderId",
      },
      query,
    );
  }

  async countProcessing(): Promise<number> {
    return this.count("c.processState = 'Processing'", []);
  }

  async queryExpired(query: ExpiredQuery): Promise<Page<StoredStateRecord>> {
    const audit = query.continuationToken ? undefined : await this.auditWhenDue();
    const page = await scanExpired(
      {
        index: this.index,
        readRecord: (orderId, meter) => this.read(orderId, meter),
        rewrite: async (record, meter) => {
          // A repair: every step of the write path, whatever this store knows of the version.
          await this.replaceMetered(withoutStoreMetadata(record), record._etag, meter, false);
        },
      },
      query,
    );
    return audit ? { ...page, cost: withAudit(page.cost, audit) } : page;
  }

  // The operator surface's reads (StateReadModel).

  async countInState(state: ProcessState): Promise<number> {
    return this.count("c.processState = @state", [{ name: "@state", value: state }]);
  }

  async countByState(): Promise<Readonly<Record<ProcessState, number>>> {
    // One count per state: each is answered from the processState index.
    const counts = await Promise.all(
      PROCESS_STATES.map(async (state) => [state, await this.countInState(state)] as const),
    );
    return Object.fromEntries(counts) as Record<ProcessState, number>;
  }

  /**
   * One count per state and version this build runs, each answered from the indexes; a version that
   * only a newer deployment runs is not counted here (its records do not parse in this one either).
   */
  async countByWorkflowVersion(states: readonly ProcessState[]): Promise<readonly WorkflowVersionCount[]> {
    const pairs = states.flatMap((processState) =>
      WORKFLOW_VERSIONS.map((workflowVersion) => ({ processState, workflowVersion })),
    );
    const counts = await Promise.all(
      pairs.map(async (pair) => ({
        ...pair,
        count: await this.count("c.processState = @state AND c.workflowVersion = @version", [
          { name: "@state", value: pair.processState },
          { name: "@version", value: pair.workflowVersion },
        ]),
      })),
    );
    return counts.filter((entry) => entry.count > 0);
  }

  oldestPending(): Promise<WaitingRecord | null> {
    return oldestPending(this.records);
  }

  countFinishedPerMinute(from: IsoInstant, to: IsoInstant): Promise<readonly FinishedInMinute[]> {
    return countFinishedPerMinute(this.records, from, to);
  }

  async countFinishedBetween(from: IsoInstant, to: IsoInstant): Promise<number> {
    return this.count(
      `c.processState IN (${TERMINAL_STATES.map((state) => `'${state}'`).join(", ")}) AND c.updatedAt >= @from AND c.updatedAt < @to`,
      [
        { name: "@from", value: from },
        { name: "@to", value: to },
      ],
    );
  }

  async listRecent(query: RecentQuery): Promise<Page<StoredStateRecord>> {
    return this.page(
      {
        name: `recent:${query.state ?? "all"}`,
        sortField: "updatedAt",
        descending: true,
        // Records only: a tombstone has no updatedAt (retired-orders.ts).
        filter: query.state === null ? "IS_DEFINED(c.updatedAt)" : "c.processState = @state",
        parameters: query.state === null ? [] : [{ name: "@state", value: query.state }],
        orderBy: "c.updatedAt DESC, c.orderId DESC",
      },
      query,
    );
  }

  // Retention (RetentionStore).

  /**
   * Retired records past the cutoff. On Azure their `ttl` deletes them; this answers the contract (and
   * a purge run by hand, or one for documents written before they had a `ttl`). Cross-partition, no
   * ORDER BY: a filter on the state and a range on `updatedAt`, both indexed.
   */
  async queryRetired(query: RetiredQuery): Promise<readonly RetiredRecord[]> {
    checkPageSize(query.maxItems);
    const { resources } = await this.records.items
      .query<{ orderId: string; attempt: number; updatedAt: string; _etag: string }>({
        query: `SELECT TOP @limit c.orderId, c.attempt, c.updatedAt, c._etag FROM c
          WHERE c.processState IN (${RETIRED_STATES.map((state) => `'${state}'`).join(", ")}) AND c.updatedAt < @before`,
        parameters: [
          { name: "@limit", value: query.maxItems },
          { name: "@before", value: query.before },
        ],
      })
      .fetchAll();
    return resources.slice(0, query.maxItems).map((r) => ({
      orderId: r.orderId,
      attempt: r.attempt,
      updatedAt: r.updatedAt,
      etag: r._etag,
    }));
  }

  /**
   * Retention's delete, as run by hand or by the contract (on Azure the `ttl` deletes): the tombstone
   * first, from the record as read, then the delete on the same ETag. A failure between leaves both.
   */
  async remove(orderId: string, ifMatch: string, purgedAt = toInstant(new Date())): Promise<boolean> {
    const meter = newMeter();
    const record = await this.read(orderId, meter);
    if (record?._etag !== ifMatch) return false;
    await upsertTombstone(this.records, record, purgedAt, meter);
    try {
      await this.records
        .item(orderId, orderId)
        .delete({ accessCondition: { type: "IfMatch", condition: ifMatch } });
      return true;
    } catch (error) {
      const status = statusOf(error);
      if (status === 404 || status === 412) return false;
      throw error;
    }
  }

  /**
   * Covers in the recovery index every record that can expire, as the state container has it
   * (`recovery-audit.ts`): what builds without the index claimed, and what a writer that died
   * mid-create left uncovered. The expired query runs it on its own (`auditEveryMs`).
   */
  async auditRecoveryIndex(): Promise<AuditReport> {
    const started = performance.now();
    const meter = newMeter();
    const covered = await coverRecordsThatCanExpire(this.records, this.index, meter);
    this.lastAuditAt = started;
    return { covered, ...meter, durationMs: performance.now() - started };
  }

  /** The audit, on the first page of a scan, when due; its cost is added to that page's. */
  private async auditWhenDue(): Promise<AuditReport | undefined> {
    if (this.auditEveryMs === null) return undefined;
    const due = this.lastAuditAt === null || performance.now() - this.lastAuditAt >= this.auditEveryMs;
    return due ? this.auditRecoveryIndex() : undefined;
  }

  /** One COUNT query over the records matching `filter`, answered from the index. */
  private async count(filter: string, parameters: SqlParameter[]): Promise<number> {
    const { resources } = await this.records.items
      .query<number>({ query: `SELECT VALUE COUNT(1) FROM c WHERE ${filter}`, parameters })
      .fetchAll();
    return resources.reduce((sum, n) => sum + n, 0);
  }

  /**
   * A record's create or conditional replace. One that gives it a `ttl` (it is retired, and may expire)
   * writes its tombstone in the same transactional batch (`retired-orders.ts`); any other is a point write.
   */
  private async writeRecord(
    document: StateDocument,
    write: RecordWrite,
  ): Promise<{ resource: unknown; requestCharge: number }> {
    if (document.ttl !== undefined) return writeWithTombstone(this.records, document, write);
    return write.kind === "create"
      ? this.records.items.create(document, { disableAutomaticIdGeneration: true })
      : this.records
          .item(document.id, document.orderId)
          .replace(document, { accessCondition: { type: "IfMatch", condition: write.ifMatch } });
  }

  private async read(orderId: string, meter: Meter): Promise<StoredStateRecord | undefined> {
    const response = await this.records.item(orderId, orderId).read();
    meter.requestUnits += response.requestCharge;
    if (response.resource === undefined) return undefined;
    meter.documentsRead++;
    return this.known.seen(fromDocument(response.resource));
  }

  private async replaceMetered(
    record: StateRecord,
    ifMatch: string,
    meter: Meter,
    useKnownVersion = true,
  ): Promise<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>> {
    const document = toDocument(record, this.retentionSeconds);
    return writeIndexed<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>>(
      this.index,
      document,
      "replace",
      async () => {
        try {
          const response = await this.writeRecord(document, { kind: "replace", ifMatch });
          meter.requestUnits += response.requestCharge;
          return { written: true, result: ok(this.known.seen(fromDocument(response.resource))) };
        } catch (error) {
          meter.requestUnits += chargeOf(error);
          const status = statusOf(error);
          if (status === 412)
            return { written: false, result: err(new PreconditionFailedError(document.orderId, ifMatch)) };
          if (status === 404) return { written: false, result: err(new NotFoundError(document.orderId)) };
          throw error;
        }
      },
      meter,
      useKnownVersion ? this.replacedVersion(document.orderId, ifMatch) : undefined,
    );
  }

  private replacedVersion(orderId: string, ifMatch: string): ReplacedVersion | undefined {
    const deadline = this.known.deadlineOf(orderId, ifMatch);
    return deadline === undefined ? undefined : { deadline };
  }

  private page(query: PagedQuery, request: PageRequest): Promise<Page<StoredStateRecord>> {
    return readPage(this.records, query, request, (record) => this.known.seen(record));
  }
}

function withAudit(cost: QueryCost, audit: AuditReport): QueryCost {
  return {
    requestUnits: cost.requestUnits + audit.requestUnits,
    itemsReturned: cost.itemsReturned,
    documentsRead: cost.documentsRead + audit.documentsRead,
    durationMs: cost.durationMs + audit.durationMs,
  };
}
