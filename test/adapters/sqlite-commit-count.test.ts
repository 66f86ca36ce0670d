import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  durabilityOf,
  type EmbeddedDatabase,
  openDatabase,
  walCommitCount,
} from "../../src/adapters/sqlite/database.js";

const opened: { db: EmbeddedDatabase; directory?: string }[] = [];

function fileDatabase(): EmbeddedDatabase {
  const directory = mkdtempSync(join(tmpdir(), "sas-commit-count-"));
  const db = openDatabase(join(directory, "count.db"), { synchronous: "NORMAL" });
  db.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, v TEXT)");
  opened.push({ db, directory });
  return db;
}

afterEach(() => {
  for (const { db, directory } of opened.splice(0)) {
    db.close();
    if (directory) rmSync(directory, { recursive: true, force: true });
  }
});

describe("walCommitCount", () => {
  it("counts one per write transaction, whatever it wrote, and nothing for reads or writes of no row", () => {
    const db = fileDatabase();
    const insert = db.prepare("INSERT INTO rows (v) VALUES (?)");
    const start = walCommitCount(db) ?? Number.NaN;
    for (let i = 0; i < 5; i++) insert.run(`single ${i}`);
    expect(walCommitCount(db)).toBe(start + 5);
    db.transaction(() => {
      for (let i = 0; i < 3; i++) insert.run(`batched ${i}`);
    })();
    expect(walCommitCount(db)).toBe(start + 6);
    db.transaction(() => db.prepare("SELECT count(*) FROM rows").get())();
    db.prepare("UPDATE rows SET v = v WHERE id < 0").run();
    expect(walCommitCount(db)).toBe(start + 6);
  });

  it("keeps counting across checkpoints that start the WAL over, and counts a second connection's commits", () => {
    const db = fileDatabase();
    const other = openDatabase(db.name);
    opened.push({ db: other });
    const start = walCommitCount(db) ?? Number.NaN;
    db.prepare("INSERT INTO rows (v) VALUES ('a')").run();
    db.pragma("wal_checkpoint(RESTART)");
    db.prepare("INSERT INTO rows (v) VALUES ('b')").run();
    other.prepare("INSERT INTO rows (v) VALUES ('c')").run();
    expect(walCommitCount(db)).toBe(start + 3);
    expect(walCommitCount(other)).toBe(start + 3);
  });

  it("is null in memory, where there is no WAL", () => {
    const db = openDatabase(":memory:");
    opened.push({ db });
    expect(walCommitCount(db)).toBeNull();
    expect(durabilityOf(db).journalMode).toBe("memory");
  });
});

describe("durabilityOf", () => {
  it("reads the journal mode and synchronous setting back from SQLite", () => {
    const db = fileDatabase();
    expect(durabilityOf(db)).toEqual({ journalMode: "wal", synchronous: "NORMAL" });
    db.pragma("synchronous = FULL");
    expect(durabilityOf(db)).toEqual({ journalMode: "wal", synchronous: "FULL" });
  });
});
