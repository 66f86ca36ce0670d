/**
 * The write batch of an embedded database: a turn's writes commit in one transaction, each caller hears
 * of its write only once it is committed, and one write's failure is its caller's alone.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { closeDatabase, writeBatchOf } from "../../laptop/sqlite/write-batch.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";

const opened: EmbeddedDatabase[] = [];
const dirs: string[] = [];

function fileDatabase(): { db: EmbeddedDatabase; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "write-batch-"));
  dirs.push(dir);
  const path = join(dir, "batch.sqlite");
  const db = openDatabase(path, { migrations: [] });
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)");
  opened.push(db);
  return { db, path };
}

afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("writeBatchOf", () => {
  it("is one batch per connection, shared by every store on it", () => {
    const { db } = fileDatabase();
    const other = fileDatabase().db;
    expect(writeBatchOf(db)).toBe(writeBatchOf(db));
    expect(writeBatchOf(other)).not.toBe(writeBatchOf(db));
  });

  it("runs the writes of one turn in one transaction, in the order asked", async () => {
    const { db } = fileDatabase();
    const insert = db.prepare("INSERT INTO notes (text) VALUES (?)");
    const seen: { text: string; inTransaction: boolean; id: number }[] = [];
    const write = (text: string) => () => {
      const id = Number(insert.run(text).lastInsertRowid);
      seen.push({ text, inTransaction: db.inTransaction, id });
      return id;
    };
    const batch = writeBatchOf(db);
    const ids = await Promise.all([batch.run(write("a")), batch.run(write("b")), batch.run(write("c"))]);
    expect(ids).toEqual([1, 2, 3]);
    expect(seen.map((s) => [s.text, s.inTransaction])).toEqual([
      ["a", true],
      ["b", true],
      ["c", true],
    ]);
    expect(db.inTransaction).toBe(false);
  });

  it("answers a write only once it is committed: another connection already reads it", async () => {
    const { db, path } = fileDatabase();
    const reader = openDatabase(path, { migrations: [] });
    opened.push(reader);
    const count = () => (reader.prepare("SELECT COUNT(*) AS n FROM notes").get() as { n: number }).n;
    const written = writeBatchOf(db).run(() => db.prepare("INSERT INTO notes (text) VALUES ('x')").run());
    // Asked for, not yet run: the batch waits for the end of the turn.
    expect(count()).toBe(0);
    await written;
    expect(count()).toBe(1);
  });

  it("reports a failing write to its own caller only; the others of its turn are committed", async () => {
    const { db } = fileDatabase();
    const insert = db.prepare("INSERT INTO notes (text) VALUES (?)");
    const batch = writeBatchOf(db);
    const outcomes = await Promise.allSettled([
      batch.run(() => insert.run("first").changes),
      batch.run(() => insert.run("first").changes),
      batch.run(() => insert.run("second").changes),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/);
    const texts = db.prepare("SELECT text FROM notes ORDER BY id").all() as { text: string }[];
    expect(texts.map((row) => row.text)).toEqual(["first", "second"]);
  });

  it("rejects every write of a turn when the connection closed before it ran", async () => {
    const { db } = fileDatabase();
    const written = writeBatchOf(db).run(() => db.prepare("INSERT INTO notes (text) VALUES ('x')").run());
    db.close();
    await expect(written).rejects.toThrow(/not open/);
  });

  it("commits and answers the writes still waiting when closeDatabase closes the connection", async () => {
    const { db, path } = fileDatabase();
    const insert = db.prepare("INSERT INTO notes (text) VALUES (?)");
    const batch = writeBatchOf(db);
    const written = [batch.run(() => insert.run("a").changes), batch.run(() => insert.run("b").changes)];
    closeDatabase(db);
    expect(db.open).toBe(false);
    await expect(Promise.all(written)).resolves.toEqual([1, 1]);
    const reopened = openDatabase(path, { migrations: [] });
    opened.push(reopened);
    const texts = reopened.prepare("SELECT text FROM notes ORDER BY id").all() as { text: string }[];
    expect(texts.map((row) => row.text)).toEqual(["a", "b"]);
  });

  it("closes a connection with no write waiting, and one already closed, without complaint", () => {
    const { db } = fileDatabase();
    closeDatabase(db);
    expect(db.open).toBe(false);
    expect(() => closeDatabase(db)).not.toThrow();
  });
});
