import Database from "better-sqlite3";
import { MIGRATIONS, type Migration } from "./migrations.js";

export type EmbeddedDatabase = Database.Database;

export interface OpenDatabaseOptions {
  /**
   * FULL (default) makes each commit survive power loss; NORMAL survives a process crash only and
   * commits faster. Both keep the database consistent.
   */
  readonly synchronous?: "FULL" | "NORMAL";
  readonly busyTimeoutMs?: number;
  readonly migrations?: readonly Migration[];
}

/**
 * Opens (creating if needed) the one SQLite database that holds every embedded store, in WAL mode so
 * readers never block the writer, and brings its schema up to date. `path` may be ":memory:".
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): EmbeddedDatabase {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${options.synchronous ?? "FULL"}`);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5_000}`);
  db.pragma("foreign_keys = ON");
  migrate(db, options.migrations ?? MIGRATIONS);
  return db;
}

export function schemaVersion(db: EmbeddedDatabase): number {
  const row = db.prepare("SELECT MAX(version) AS version FROM schema_migrations").get() as {
    version: number | null;
  };
  return row.version ?? 0;
}

function migrate(db: EmbeddedDatabase, migrations: readonly Migration[]): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version     INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at  TEXT NOT NULL
  )`);
  const apply = db.transaction((migration: Migration) => {
    db.exec(migration.sql);
    db.prepare("INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)").run(
      migration.version,
      migration.description,
      new Date().toISOString(),
    );
  });
  // IMMEDIATE takes the write lock first, so two processes opening one new file migrate it once.
  const pending = db.transaction(() => {
    const current = schemaVersion(db);
    const newer = [...migrations].sort((a, b) => a.version - b.version).filter((m) => m.version > current);
    for (const migration of newer) apply(migration);
    return current;
  });
  const current = pending.immediate();
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (current > known) {
    throw new Error(
      `database schema version ${current} is newer than this code knows (${known}); refusing to open it`,
    );
  }
}
