import type { EmbeddedDatabase } from "../../../src/adapters/sqlite/database.js";
import type { StateRecord } from "../../../src/domain/state-record.js";

/** The audited fields of the row just written: one parse of its document (SQLite reuses it for each field). */
const AUDITED_NEW = `json_object('orderId', NEW.order_id, 'processState', NEW.process_state, 'lockedBy', NEW.locked_by,
  'completeBy', NEW.complete_by, 'failureCount', json_extract(NEW.document, '$.failureCount'),
  'updatedAt', json_extract(NEW.document, '$.updatedAt'), 'lastErrorCode', json_extract(NEW.document, '$.lastError.code'))`;

/** An update's `before`: a marker saying the record it replaced is the order's audit row before it. */
const REPLACED = "";

/**
 * An audit of every state-record write, kept by the database itself (a trigger), so the invariant
 * checks read what was written rather than what the code under test says it wrote. Off by default:
 * the demo and the tests turn it on. Each row keeps the record as written; a create has no `before`, and
 * what an update replaced is the order's row before it (every insert and update is audited), so the
 * trigger parses only the new document: parsing the old one too doubled what the audit cost each write.
 */
export function enableStateAudit(db: EmbeddedDatabase): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS state_audit (
      id       INTEGER PRIMARY KEY AUTOINCREMENT,
      order_id TEXT NOT NULL,
      before   TEXT,
      after    TEXT NOT NULL
    );
    CREATE TRIGGER IF NOT EXISTS state_audit_insert AFTER INSERT ON state_records BEGIN
      INSERT INTO state_audit (order_id, before, after) VALUES (NEW.order_id, NULL, ${AUDITED_NEW});
    END;
    CREATE TRIGGER IF NOT EXISTS state_audit_update AFTER UPDATE ON state_records BEGIN
      INSERT INTO state_audit (order_id, before, after) VALUES (NEW.order_id, '${REPLACED}', ${AUDITED_NEW});
    END;
  `);
}

/** The fields of a record the write invariants judge; the audit keeps only these. */
export type AuditedState = Pick<
  StateRecord,
  "orderId" | "processState" | "lockedBy" | "completeBy" | "failureCount" | "updatedAt"
> & {
  /** Tells a starter's released claim (`StartFailed`) from other moves back to `Pending`. */
  readonly lastErrorCode: string | null;
};

/** A record as the audit keeps it. */
export function toAudited(record: StateRecord): AuditedState {
  const { orderId, processState, lockedBy, completeBy, failureCount, updatedAt } = record;
  return {
    orderId,
    processState,
    lockedBy,
    completeBy,
    failureCount,
    updatedAt,
    lastErrorCode: record.lastError?.code ?? null,
  };
}

export interface AuditedWrite {
  readonly orderId: string;
  readonly before: AuditedState | null;
  readonly after: AuditedState;
}

export function auditedWrites(db: EmbeddedDatabase): AuditedWrite[] {
  const rows = db.prepare("SELECT order_id, before, after FROM state_audit ORDER BY id").all() as {
    order_id: string;
    before: string | null;
    after: string;
  }[];
  // An audit kept before the marker holds the replaced record itself.
  const last = new Map<string, AuditedState>();
  return rows.map((row) => {
    const after = JSON.parse(row.after) as AuditedState;
    const before =
      row.before === REPLACED
        ? (last.get(row.order_id) ?? null)
        : row.before === null
          ? null
          : (JSON.parse(row.before) as AuditedState);
    last.set(row.order_id, after);
    return { orderId: row.order_id, before, after };
  });
}
