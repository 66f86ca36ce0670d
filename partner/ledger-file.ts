import { openDatabase } from "../src/adapters/sqlite/database.js";
import type { Migration } from "../src/adapters/sqlite/migrations.js";
import { Ledger, type LedgerEvent, type LedgerJournal } from "./ledger.js";
import { parseEvent } from "./ledger-schema.js";

/** The partner's books on disk: `sas partner --ledger <file>`. */
export interface LedgerFile {
  readonly ledger: Ledger;
  /** Events read back when the file was opened: 0 for a new file. */
  readonly restoredEvents: number;
  close(): void;
}

const LEDGER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "the partner's journal: every change to its books, in order",
    sql: `CREATE TABLE partner_events (
      seq   INTEGER PRIMARY KEY AUTOINCREMENT,
      event TEXT NOT NULL
    )`,
  },
];

/**
 * Opens (creating if needed) a partner ledger kept in its own SQLite file, and rebuilds the books from
 * it. Each change is one committed row before the partner answers; in WAL with `synchronous=NORMAL`
 * a killed partner loses nothing it answered, which is what the chaos run kills it to show.
 */
export function openLedgerFile(path: string): LedgerFile {
  const db = openDatabase(path, { synchronous: "NORMAL", migrations: LEDGER_MIGRATIONS });
  const insert = db.prepare("INSERT INTO partner_events (event) VALUES (?)");
  const journal: LedgerJournal = {
    append: (event) => void insert.run(JSON.stringify(event)),
    clear: () => void db.exec("DELETE FROM partner_events"),
  };
  const rows = db.prepare("SELECT seq, event FROM partner_events ORDER BY seq").iterate();
  let restoredEvents = 0;
  // Each row checked before it is replayed (F24-10): an error names the file, the row and the field.
  const events = (function* (): Generator<LedgerEvent> {
    for (const row of rows) {
      const { seq, event } = eventRow(path, row);
      restoredEvents++;
      yield parseEvent(`${path} event ${seq}`, event);
    }
  })();
  const ledger = Ledger.replay(events, journal);
  return { ledger, restoredEvents, close: () => db.close() };
}

function eventRow(path: string, row: unknown): { seq: number; event: string } {
  const { seq, event } = (row ?? {}) as { seq?: unknown; event?: unknown };
  if (typeof seq !== "number" || typeof event !== "string") {
    throw new Error(`${path}: a row of partner_events is not a sequence number and an event`);
  }
  return { seq, event };
}
