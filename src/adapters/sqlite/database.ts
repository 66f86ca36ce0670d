import { closeSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import Database from "better-sqlite3";
import { MIGRATIONS, type Migration } from "./migrations.js";

export type EmbeddedDatabase = Database.Database;

export interface OpenDatabaseOptions {
  /**
   * FULL (default) makes each commit survive power loss; NORMAL survives a process crash only and
   * commits faster. Both keep the database consistent.
   */
  readonly synchronous?: "FULL" | "NORMAL";
  /**
   * WAL (default) lets readers run beside the writer, but needs memory shared between the processes
   * that open the file, which a network share cannot give; DELETE (a rollback journal) works there.
   */
  readonly journalMode?: "WAL" | "DELETE";
  readonly busyTimeoutMs?: number;
  readonly migrations?: readonly Migration[];
}

/**
 * Opens (creating if needed) the one SQLite database that holds every embedded store, in WAL mode
 * unless told otherwise, so readers never block the writer, and brings its schema up to date. `path`
 * may be ":memory:".
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): EmbeddedDatabase {
  const db = new Database(path);
  db.pragma(`journal_mode = ${options.journalMode ?? "WAL"}`);
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

/** Byte offsets of the two copies of the wal-index header's change counter in the `-shm` file. */
const WAL_INDEX_CHANGE_COUNTER = [8, 56] as const;

/**
 * Write transactions committed to this database's WAL so far, by every connection: the change counter
 * of the wal-index header (`iChange` in the `-shm` file, SQLite's wal.c), which SQLite increments once
 * for each commit that appends frames to the WAL and keeps across checkpoints and WAL restarts.
 * Transactions that wrote nothing are not commits to it. Taken twice, the difference counts the
 * commits in between (modulo 2^32). Null for a database with no WAL (in memory, or another journal mode).
 * Reads 64 bytes of a file the operating system already holds in memory: cheap enough to take often.
 */
export function walCommitCount(db: EmbeddedDatabase): number | null {
  if (db.memory || String(db.pragma("journal_mode", { simple: true })).toLowerCase() !== "wal") return null;
  let fd: number;
  try {
    fd = openSync(`${db.name}-shm`, "r");
  } catch {
    return null;
  }
  try {
    const header = Buffer.alloc(64);
    // Two copies; a writer on another thread may be between them, so read until they agree.
    for (let attempt = 0; attempt < 100; attempt++) {
      if (readSync(fd, header, 0, header.length, 0) < header.length) return null;
      const [first, second] = WAL_INDEX_CHANGE_COUNTER.map((offset) =>
        endianness() === "LE" ? header.readUInt32LE(offset) : header.readUInt32BE(offset),
      );
      if (first === second) return first ?? null;
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

const SYNCHRONOUS_NAMES = ["OFF", "NORMAL", "FULL", "EXTRA"] as const;

/** How this connection commits, as SQLite reports it: the journal mode ("wal", or "memory" in memory) and `synchronous`. */
export function durabilityOf(db: EmbeddedDatabase): { journalMode: string; synchronous: string } {
  const level = Number(db.pragma("synchronous", { simple: true }));
  return {
    journalMode: String(db.pragma("journal_mode", { simple: true })).toLowerCase(),
    synchronous: SYNCHRONOUS_NAMES[level] ?? String(level),
  };
}
