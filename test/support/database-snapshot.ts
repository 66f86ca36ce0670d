import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";

export type SnapshotRow = Readonly<Record<string, string | number | null>>;
export type TableSnapshot = Readonly<Record<string, readonly SnapshotRow[]>>;

/** Tables the schema keeps for itself: a restored database has its own. */
const SCHEMA_TABLES = new Set(["schema_migrations", "sqlite_sequence"]);

function tablesOf(db: EmbeddedDatabase): string[] {
  const rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
    name: string;
  }[];
  return rows.map((row) => row.name).filter((name) => !SCHEMA_TABLES.has(name));
}

/**
 * Every row of every table the embedded database holds, as committed: what a process that died at this
 * moment would leave behind. Work held only in memory (an activity result not yet committed) is not in it.
 */
export function snapshotTables(db: EmbeddedDatabase): TableSnapshot {
  const snapshot: Record<string, SnapshotRow[]> = {};
  for (const table of tablesOf(db)) {
    const rows = db.prepare(`SELECT * FROM "${table}"`).all() as SnapshotRow[];
    if (rows.length > 0) snapshot[table] = rows;
  }
  return snapshot;
}

/** Writes a snapshot's rows into a freshly migrated database, in one transaction. */
export function restoreTables(db: EmbeddedDatabase, snapshot: TableSnapshot): void {
  const known = new Set(tablesOf(db));
  const write = db.transaction(() => {
    // Parents before children: orders before their items.
    const tables = Object.keys(snapshot).sort((a, b) => (a === "orders" ? -1 : b === "orders" ? 1 : 0));
    for (const table of tables) {
      if (!known.has(table)) throw new Error(`the snapshot has a table this schema lacks: ${table}`);
      for (const row of snapshot[table] ?? []) {
        const columns = Object.keys(row);
        const sql = `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
        db.prepare(sql).run(...columns.map((c) => row[c] ?? null));
      }
    }
  });
  write();
}
