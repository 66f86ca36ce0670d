import type { Statement } from "better-sqlite3";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import { checkedRecordedScan } from "../../src/domain/recorded-scan.js";
import type { RecordedScan, ScanJournal } from "../../src/ports/scan-journal.js";

/** The scan journal on SQLite: one row, replaced by every record. */
export class SqliteScanJournal implements ScanJournal {
  private readonly upsert: Statement<[string]>;
  private readonly select: Statement<[], { scan: string }>;

  constructor(db: EmbeddedDatabase) {
    this.upsert = db.prepare(
      `INSERT INTO supervisor_last_scan (id, scan) VALUES (1, ?)
       ON CONFLICT (id) DO UPDATE SET scan = excluded.scan`,
    );
    this.select = db.prepare("SELECT scan FROM supervisor_last_scan WHERE id = 1");
  }

  async record(scan: RecordedScan): Promise<void> {
    this.upsert.run(JSON.stringify(checkedRecordedScan(scan)));
  }

  async last(): Promise<RecordedScan | null> {
    const row = this.select.get();
    return row ? checkedRecordedScan(JSON.parse(row.scan)) : null;
  }
}
