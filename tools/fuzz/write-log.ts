import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";

/** The tables an order's data lives in: its state record, and the order with its lines. */
const WATCHED = ["state_records", "orders", "order_items"] as const;

export interface Write {
  readonly table: string;
  readonly orderId: string;
}

/**
 * Every write to the order tables, recorded by SQLite triggers rather than reported by the code
 * under test, so a write the code did not mean to make shows up too.
 */
export class WriteLog {
  private readonly latest: () => number;
  private readonly after: (mark: number) => Write[];

  constructor(db: EmbeddedDatabase) {
    db.exec(`CREATE TABLE IF NOT EXISTS fuzz_writes (
      id INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, order_id TEXT NOT NULL)`);
    for (const table of WATCHED) {
      for (const [event, row] of [
        ["INSERT", "NEW"],
        ["UPDATE", "NEW"],
        ["DELETE", "OLD"],
      ] as const) {
        db.exec(`CREATE TRIGGER IF NOT EXISTS fuzz_${table}_${event} AFTER ${event} ON ${table} BEGIN
          INSERT INTO fuzz_writes (tbl, order_id) VALUES ('${table}', ${row}.order_id); END`);
      }
    }
    const latest = db.prepare("SELECT COALESCE(MAX(id), 0) AS id FROM fuzz_writes");
    const after = db.prepare('SELECT tbl AS "table", order_id AS orderId FROM fuzz_writes WHERE id > ?');
    this.latest = () => (latest.get() as { id: number }).id;
    this.after = (mark) => after.all(mark) as Write[];
  }

  /** A mark to read the writes after. */
  mark(): number {
    return this.latest();
  }

  /** The writes made since `mark`. */
  since(mark: number): Write[] {
    return this.after(mark);
  }
}
