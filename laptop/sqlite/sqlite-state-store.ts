import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Statement } from "better-sqlite3";
import { BOUND_LIMIT } from "../../src/adapters/sqlite/bound-limit.js";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import { err, ok, type Result } from "../../src/domain/result.js";
import {
  PROCESS_STATES,
  type ProcessState,
  RETIRED_STATES,
  STATE_SCHEMA_VERSION,
  type StateRecord,
  type StoredStateRecord,
  TERMINAL_STATES,
} from "../../src/domain/state-record.js";
import { parseStateRecord } from "../../src/domain/state-record-check.js";
import { type IsoInstant, toInstant } from "../../src/domain/time.js";
import type { RetentionStore, RetiredQuery, RetiredRecord } from "../../src/ports/retention-store.js";
import type {
  FinishedInMinute,
  RecentQuery,
  StateReadModel,
  WaitingRecord,
  WorkflowVersionCount,
} from "../../src/ports/state-read-model.js";
import {
  type ClaimableQuery,
  type CreateResult,
  type ExpiredQuery,
  MAX_PAGE_SIZE,
  type Page,
  type RetiredOrder,
  type StateStore,
} from "../../src/ports/state-store.js";
import {
  InvalidContinuationTokenError,
  NotFoundError,
  PreconditionFailedError,
} from "../../src/ports/store-errors.js";
import { SqliteRetiredOrders } from "./retired-orders.js";
import { type WriteBatch, writeBatchOf } from "./write-batch.js";

interface RecordRow {
  readonly etag: string;
  readonly document: string;
}

interface KeyedRow extends RecordRow {
  readonly sort_key: string;
  readonly order_id: string;
}

type QueryName = "claimable" | "expired" | `recent:${ProcessState | "all"}`;

/** Where the previous page stopped: the last row's (sort key, orderId). */
interface Cursor {
  readonly query: QueryName;
  readonly sortKey: string;
  readonly orderId: string;
}

/**
 * The paged queries, each keyset-ordered on (sort key, orderId) and answered from a partial index named
 * in the query: the planner prefers the (process_state, ...) index, then reads every matching row of both
 * states and sorts them on each page. A partial index holds only the rows that can match, already in
 * sort order, so a page reads its own rows and one more, however many records match or do not.
 */
export const PAGED_QUERIES: Readonly<Record<"claimable" | "expired", string>> = {
  claimable: `SELECT order_id, etag, document, not_before AS sort_key FROM state_records INDEXED BY state_records_claimable
     WHERE locked_by IS NULL AND process_state IN ('Pending', 'Compensating') AND not_before <= ?
       AND (not_before, order_id) > (?, ?)
     ORDER BY not_before, order_id LIMIT ${BOUND_LIMIT}`,
  // The index holds owned records only (the only ones with a deadline), expired or not.
  expired: `SELECT order_id, etag, document, complete_by AS sort_key FROM state_records INDEXED BY state_records_expired
     WHERE process_state IN ('Processing', 'Compensating') AND complete_by <= ?
       AND (complete_by, order_id) > (?, ?)
     ORDER BY complete_by, order_id LIMIT ${BOUND_LIMIT}`,
};

/** Newest change first, in every state or in one; keyset on (updated_at, order_id) descending. */
const RECENT_QUERIES = {
  all: `SELECT order_id, etag, document, updated_at AS sort_key FROM state_records INDEXED BY state_records_recent
     WHERE (updated_at, order_id) < (?, ?) ORDER BY updated_at DESC, order_id DESC LIMIT ${BOUND_LIMIT}`,
  byState: `SELECT order_id, etag, document, updated_at AS sort_key FROM state_records INDEXED BY state_records_recent_by_state
     WHERE process_state = ? AND (updated_at, order_id) < (?, ?) ORDER BY updated_at DESC, order_id DESC LIMIT ${BOUND_LIMIT}`,
};

/**
 * The operator's statistics, each read from an index alone: the `Pending` record waiting longest is the
 * first entry of the partial index of `Pending` records by progress, and the finished records of a
 * window, in all or per minute, are one range of the (process_state, updated_at, order_id) index per
 * terminal state.
 */
export const STATS_QUERIES = {
  oldestPending: `SELECT order_id, progress_at FROM state_records INDEXED BY state_records_pending_by_progress
     WHERE process_state = 'Pending' ORDER BY progress_at, order_id LIMIT 1`,
  finished: `SELECT COUNT(*) AS n FROM state_records INDEXED BY state_records_recent_by_state
     WHERE process_state IN (${TERMINAL_STATES.map((state) => `'${state}'`).join(", ")})
       AND updated_at >= ? AND updated_at < ?`,
  // An instant's first 16 characters are its minute (`YYYY-MM-DDTHH:MM`): instants are fixed-width ISO text.
  finishedPerMinute: `SELECT process_state, substr(updated_at, 1, 16) AS minute, COUNT(*) AS n
     FROM state_records INDEXED BY state_records_recent_by_state
     WHERE process_state IN (${TERMINAL_STATES.map((state) => `'${state}'`).join(", ")})
       AND updated_at >= ? AND updated_at < ?
     GROUP BY process_state, minute`,
};

/**
 * Retention's batch: a range of the (process_state, updated_at, order_id) index per retired state, no
 * sort (a batch needs no order: what it deletes is gone from the next one).
 */
export const RETENTION_QUERIES = {
  retired: `SELECT order_id, etag, updated_at, json_extract(document, '$.attempt') AS attempt
     FROM state_records INDEXED BY state_records_recent_by_state
     WHERE process_state IN (${RETIRED_STATES.map((state) => `'${state}'`).join(", ")}) AND updated_at < ?
     LIMIT ${BOUND_LIMIT}`,
  remove: "DELETE FROM state_records WHERE order_id = ? AND etag = ?",
};

/** The counts per state (the starter's admission, the stats): covered by the by-state index. */
export const COUNT_QUERIES = {
  byState: "SELECT process_state, COUNT(*) AS n FROM state_records GROUP BY process_state",
  inState: "SELECT COUNT(*) AS n FROM state_records WHERE process_state = ?",
  byWorkflowVersion: `SELECT process_state, json_extract(document, '$.workflowVersion') AS version, COUNT(*) AS n
    FROM state_records WHERE process_state IN (SELECT value FROM json_each(?))
    GROUP BY process_state, version`,
  processing: "SELECT COUNT(*) AS n FROM state_records WHERE process_state = 'Processing'",
};

/** The first cursor: sorts before every real key. */
const START = { sortKey: "", orderId: "" };
/** The first cursor of a descending query: sorts after every real key (instants are ASCII). */
const START_DESCENDING = { sortKey: "\uffff", orderId: "" };

/**
 * The state store on SQLite, behind each of its ports (`StateStore`, `StateReadModel`, `RetentionStore`).
 * Each record is its JSON document plus the columns the queries filter and
 * sort on. Pages are keyset-ordered on (`notBefore`, `orderId`) or (`completeBy`, `orderId`), values that
 * do not change while a record matches, so concurrent updates cannot make a page repeat or skip a record.
 */
export class SqliteStateStore implements StateStore, StateReadModel, RetentionStore {
  private readonly selectOne: Statement<[string], RecordRow>;
  private readonly insert: Statement<[RecordColumns]>;
  private readonly update: Statement<[RecordColumns & { ifMatch: string }]>;
  private readonly processing: Statement<[], { n: number }>;
  private readonly inState: Statement<[string], { n: number }>;
  private readonly everything: Statement<[], RecordRow>;
  private readonly byState: Statement<[], { process_state: string; n: number }>;
  private readonly byWorkflowVersion: Statement<
    [string],
    { process_state: string; version: number; n: number }
  >;
  private readonly claimable: Statement<[string, string, string, number], KeyedRow>;
  private readonly expired: Statement<[string, string, string, number], KeyedRow>;
  private readonly recentAll: Statement<[string, string, number], KeyedRow>;
  private readonly recentByState: Statement<[string, string, string, number], KeyedRow>;
  private readonly oldestWaiting: Statement<[], { order_id: string; progress_at: string }>;
  private readonly finished: Statement<[string, string], { n: number }>;
  private readonly finishedPerMinute: Statement<
    [string, string],
    { process_state: string; minute: string; n: number }
  >;
  private readonly retired: Statement<
    [string, number],
    { order_id: string; etag: string; updated_at: string; attempt: number }
  >;
  private readonly removeOne: Statement<[string, string]>;
  private readonly tombstones: SqliteRetiredOrders;
  private readonly writes: WriteBatch;

  constructor(db: EmbeddedDatabase) {
    this.selectOne = db.prepare("SELECT etag, document FROM state_records WHERE order_id = ?");
    this.insert = db.prepare(
      `INSERT INTO state_records (order_id, etag, process_state, locked_by, complete_by, not_before, updated_at, progress_at, document)
       VALUES (@orderId, @etag, @processState, @lockedBy, @completeBy, @notBefore, @updatedAt, @progressAt, @document)
       ON CONFLICT (order_id) DO NOTHING`,
    );
    this.update = db.prepare(
      `UPDATE state_records
       SET etag = @etag, process_state = @processState, locked_by = @lockedBy, complete_by = @completeBy,
           not_before = @notBefore, updated_at = @updatedAt, progress_at = @progressAt, document = @document
       WHERE order_id = @orderId AND etag = @ifMatch`,
    );
    this.byState = db.prepare(COUNT_QUERIES.byState);
    this.byWorkflowVersion = db.prepare(COUNT_QUERIES.byWorkflowVersion);
    this.everything = db.prepare("SELECT etag, document FROM state_records ORDER BY order_id");
    this.inState = db.prepare(COUNT_QUERIES.inState);
    this.processing = db.prepare(COUNT_QUERIES.processing);
    this.claimable = db.prepare(PAGED_QUERIES.claimable);
    this.expired = db.prepare(PAGED_QUERIES.expired);
    this.recentAll = db.prepare(RECENT_QUERIES.all);
    this.recentByState = db.prepare(RECENT_QUERIES.byState);
    this.oldestWaiting = db.prepare(STATS_QUERIES.oldestPending);
    this.finished = db.prepare(STATS_QUERIES.finished);
    this.finishedPerMinute = db.prepare(STATS_QUERIES.finishedPerMinute);
    this.retired = db.prepare(RETENTION_QUERIES.retired);
    this.removeOne = db.prepare(RETENTION_QUERIES.remove);
    this.tombstones = new SqliteRetiredOrders(db, this.removeOne);
    this.writes = writeBatchOf(db);
  }

  async get(orderId: string): Promise<StoredStateRecord | undefined> {
    const row = this.selectOne.get(orderId);
    return row ? toStored(row) : undefined;
  }

  async getRetired(orderId: string): Promise<RetiredOrder | undefined> {
    return this.tombstones.get(orderId);
  }

  async createIfAbsent(record: StateRecord): Promise<CreateResult> {
    const valid = checked(record);
    const columns = toColumns(valid);
    return this.writes.run((): CreateResult => {
      const { changes } = this.insert.run(columns);
      if (changes === 1) return { created: true, record: { ...valid, _etag: columns.etag } };
      const existing = this.selectOne.get(valid.orderId);
      if (!existing) throw new Error(`state record ${valid.orderId} vanished during create`);
      return { created: false, existing: toStored(existing) };
    });
  }

  async replace(
    record: StateRecord,
    ifMatch: string,
  ): Promise<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>> {
    const valid = checked(record);
    const columns = toColumns(valid);
    return this.writes.run(() => {
      const { changes } = this.update.run({ ...columns, ifMatch });
      if (changes === 1) return ok({ ...valid, _etag: columns.etag });
      const exists = this.selectOne.get(valid.orderId) !== undefined;
      return err(
        exists ? new PreconditionFailedError(valid.orderId, ifMatch) : new NotFoundError(valid.orderId),
      );
    });
  }

  async queryClaimable(query: ClaimableQuery): Promise<Page<StoredStateRecord>> {
    return this.page("claimable", query, (cursor, limit) =>
      this.claimable.all(query.now, cursor.sortKey, cursor.orderId, limit),
    );
  }

  async countProcessing(): Promise<number> {
    return this.processing.get()?.n ?? 0;
  }

  async queryExpired(query: ExpiredQuery): Promise<Page<StoredStateRecord>> {
    return this.page("expired", query, (cursor, limit) =>
      this.expired.all(query.now, cursor.sortKey, cursor.orderId, limit),
    );
  }

  // The operator surface's reads (StateReadModel).

  async countInState(state: ProcessState): Promise<number> {
    return this.inState.get(state)?.n ?? 0;
  }

  async countByState(): Promise<Readonly<Record<ProcessState, number>>> {
    const counts = Object.fromEntries(PROCESS_STATES.map((state) => [state, 0])) as Record<
      ProcessState,
      number
    >;
    for (const row of this.byState.all()) counts[row.process_state as ProcessState] = row.n;
    return counts;
  }

  async countByWorkflowVersion(states: readonly ProcessState[]): Promise<readonly WorkflowVersionCount[]> {
    return this.byWorkflowVersion.all(JSON.stringify(states)).map((row) => ({
      workflowVersion: row.version,
      processState: row.process_state as ProcessState,
      count: row.n,
    }));
  }

  async oldestPending(): Promise<WaitingRecord | null> {
    const row = this.oldestWaiting.get();
    return row ? { orderId: row.order_id, progressAt: row.progress_at } : null;
  }

  async countFinishedBetween(from: IsoInstant, to: IsoInstant): Promise<number> {
    return this.finished.get(from, to)?.n ?? 0;
  }

  async countFinishedPerMinute(from: IsoInstant, to: IsoInstant): Promise<readonly FinishedInMinute[]> {
    return this.finishedPerMinute.all(from, to).map((row) => ({
      minute: row.minute,
      processState: row.process_state as ProcessState,
      count: row.n,
    }));
  }

  async listRecent(query: RecentQuery): Promise<Page<StoredStateRecord>> {
    const { state } = query;
    return this.page(
      `recent:${state ?? "all"}`,
      query,
      (cursor, limit) =>
        state === null
          ? this.recentAll.all(cursor.sortKey, cursor.orderId, limit)
          : this.recentByState.all(state, cursor.sortKey, cursor.orderId, limit),
      START_DESCENDING,
    );
  }

  // Retention (RetentionStore).

  async queryRetired(query: RetiredQuery): Promise<readonly RetiredRecord[]> {
    checkPageSize(query.maxItems);
    return this.retired.all(query.before, query.maxItems).map((row) => ({
      orderId: row.order_id,
      attempt: row.attempt,
      updatedAt: row.updated_at,
      etag: row.etag,
    }));
  }

  /** The delete and the order's tombstone in one transaction (`retired-orders.ts`). */
  async remove(orderId: string, ifMatch: string, purgedAt = toInstant(new Date())): Promise<boolean> {
    return this.tombstones.remove(orderId, ifMatch, purgedAt);
  }

  /** Every record: for the embedded host's summaries and tests, not for the handlers. */
  all(): StoredStateRecord[] {
    return this.everything.all().map(toStored);
  }

  private page(
    name: QueryName,
    request: { readonly maxItems: number; readonly continuationToken?: string | null },
    select: (cursor: { sortKey: string; orderId: string }, limit: number) => KeyedRow[],
    start = START,
  ): Page<StoredStateRecord> {
    checkPageSize(request.maxItems);
    const cursor = request.continuationToken ? decodeCursor(request.continuationToken, name) : start;
    const started = performance.now();
    // One row more than asked tells whether another page exists without a second query.
    const rows = select(cursor, request.maxItems + 1);
    const items = rows.slice(0, request.maxItems);
    const last = items[items.length - 1];
    const continuationToken =
      rows.length > request.maxItems && last
        ? encodeCursor({ query: name, sortKey: last.sort_key, orderId: last.order_id })
        : null;
    return {
      items: items.map(toStored),
      continuationToken,
      cost: {
        requestUnits: 0,
        itemsReturned: items.length,
        documentsRead: rows.length,
        durationMs: performance.now() - started,
      },
    };
  }
}

function checked(record: StateRecord): StateRecord {
  const parsed = parseStateRecord(stripMetadata(record));
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

/** Store metadata that callers hand back with the record is not part of the document. */
function stripMetadata(record: StateRecord): unknown {
  const { _etag, ...document } = record as StoredStateRecord;
  void _etag;
  return document;
}

/** The row a record is written as: a new ETag, the columns the queries use, and the whole document. */
interface RecordColumns {
  readonly orderId: string;
  readonly etag: string;
  readonly processState: string;
  readonly lockedBy: string | null;
  readonly completeBy: string | null;
  readonly notBefore: string;
  readonly updatedAt: string;
  readonly progressAt: string;
  readonly document: string;
}

function toColumns(record: StateRecord): RecordColumns {
  return {
    orderId: record.orderId,
    etag: `"${randomUUID()}"`,
    processState: record.processState,
    lockedBy: record.lockedBy,
    completeBy: record.completeBy,
    notBefore: record.notBefore,
    updatedAt: record.updatedAt,
    progressAt: record.progressAt,
    document: JSON.stringify(record),
  };
}

/**
 * The record in a row. Rows this version wrote are trusted as they are (checked when written); one
 * written under another schema version is upgraded through the record's upgrades, or refused with why.
 */
function toStored(row: RecordRow): StoredStateRecord {
  const document: unknown = JSON.parse(row.document);
  const current =
    typeof document === "object" &&
    document !== null &&
    "schemaVersion" in document &&
    document.schemaVersion === STATE_SCHEMA_VERSION;
  if (current) {
    return { ...(document as StateRecord), _etag: row.etag };
  }
  const parsed = parseStateRecord(document);
  if (!parsed.ok) throw new Error(`a stored state record: ${parsed.error.message}`, { cause: parsed.error });
  return { ...parsed.value, _etag: row.etag };
}

function checkPageSize(maxItems: number): void {
  if (!Number.isInteger(maxItems) || maxItems < 1 || maxItems > MAX_PAGE_SIZE) {
    throw new RangeError(`maxItems must be an integer from 1 to ${MAX_PAGE_SIZE}; got ${maxItems}`);
  }
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.query, cursor.sortKey, cursor.orderId])).toString("base64url");
}

function decodeCursor(token: string, expected: QueryName): Cursor {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw new InvalidContinuationTokenError("not a token issued by this store");
  }
  if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((p) => typeof p === "string")) {
    throw new InvalidContinuationTokenError("not a token issued by this store");
  }
  const [query, sortKey, orderId] = parts as [string, string, string];
  if (query !== expected)
    throw new InvalidContinuationTokenError(`issued for the ${query} query, not ${expected}`);
  return { query, sortKey, orderId };
}
