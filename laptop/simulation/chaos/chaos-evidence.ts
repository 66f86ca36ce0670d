import { join } from "node:path";
import type { PartnerLedger } from "../../../partner/ledger.js";
import { openLedgerFile } from "../../../partner/ledger-file.js";
import { SystemClock } from "../../../src/adapters/clock/system-clock.js";
import { openDatabase } from "../../../src/adapters/sqlite/database.js";
import { QUEUE_NAMES } from "../../../src/config/names.js";
import type { StateRecord } from "../../../src/domain/state-record.js";
import { EMBEDDED_SYNCHRONOUS } from "../../embedded/embedded-stack.js";
import { SqliteMessageQueue } from "../../sqlite/sqlite-message-queue.js";
import { SqliteStateStore } from "../../sqlite/sqlite-state-store.js";
import { type AuditedWrite, auditedWrites, enableStateAudit } from "../oracles/state-audit.js";

export const HOST_DATABASE = "sas.sqlite";
export const PARTNER_LEDGER = "partner-ledger.sqlite";

/** Creates the host's database before its first start, with the audit of every record write turned on. */
export function prepareHostDatabase(dir: string): void {
  const db = openDatabase(join(dir, HOST_DATABASE), { synchronous: EMBEDDED_SYNCHRONOUS });
  enableStateAudit(db);
  db.close();
}

export interface StoredEvidence {
  readonly records: ReadonlyMap<string, StateRecord>;
  readonly deadLettered: ReadonlyMap<string, string>;
  readonly writes: readonly AuditedWrite[];
  readonly ledger: PartnerLedger;
}

/** Reads what the stopped host and partner left on disk: the records, the dead letters, the audit, the ledger. */
export async function readStoredEvidence(dir: string): Promise<StoredEvidence> {
  const db = openDatabase(join(dir, HOST_DATABASE), { synchronous: EMBEDDED_SYNCHRONOUS });
  const ledgerFile = openLedgerFile(join(dir, PARTNER_LEDGER));
  try {
    const records = new Map(new SqliteStateStore(db).all().map((r): [string, StateRecord] => [r.orderId, r]));
    const deadLettered = new Map<string, string>();
    const orders = new SqliteMessageQueue(db, new SystemClock(), QUEUE_NAMES.orders);
    for (const message of await orders.deadLetterQueue.peek(1_000_000)) {
      const body = message.body as { orderId?: unknown } | null;
      const orderId = typeof body?.orderId === "string" ? body.orderId : message.messageId;
      deadLettered.set(orderId, message.deadLetterReason ?? "");
    }
    return { records, deadLettered, writes: auditedWrites(db), ledger: ledgerFile.ledger.snapshot() };
  } finally {
    ledgerFile.close();
    db.close();
  }
}
