import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startBackgroundCheckpoints } from "../../laptop/sqlite/background-checkpoints.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";

const PAGE = 4_096;
const opened: { db: EmbeddedDatabase; directory: string }[] = [];

function fileDatabase(): { db: EmbeddedDatabase; path: string } {
  const directory = mkdtempSync(join(tmpdir(), "sas-checkpoints-"));
  const path = join(directory, "embedded.db");
  const db = openDatabase(path, { synchronous: "NORMAL" });
  db.exec("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  opened.push({ db, directory });
  return { db, path };
}

/** Commits `count` rows of about a page each, one commit per row, yielding now and then as a host does. */
async function commitRows(db: EmbeddedDatabase, count: number): Promise<void> {
  const insert = db.prepare("INSERT INTO blobs (body) VALUES (?)");
  const body = "x".repeat(PAGE - 200);
  for (let i = 0; i < count; i++) {
    insert.run(body);
    if (i % 25 === 24) await delay(1);
  }
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await delay(10);
  }
}

afterEach(() => {
  for (const { db, directory } of opened.splice(0)) {
    if (db.open) db.close();
    rmSync(directory, { recursive: true, force: true });
  }
});

describe("background WAL checkpoints", () => {
  it("turns SQLite's own checkpoints off while the worker runs, and back on when it stops", async () => {
    const { db } = fileDatabase();
    const checkpoints = startBackgroundCheckpoints(db);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    await checkpoints?.stop();
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1_000);
  });

  it("copies committed pages into the database file from the worker", async () => {
    const { db, path } = fileDatabase();
    const checkpoints = startBackgroundCheckpoints(db, { intervalMs: 5 });
    const before = statSync(path).size;
    await commitRows(db, 300);
    // Nothing on this thread checkpoints (automatic checkpoints are off), so only the worker can grow the file.
    await until(() => statSync(path).size >= before + 300 * PAGE);
    await checkpoints?.stop();
  });

  // Retried: on a 2-core machine running other test files' child processes beside it, the worker thread
  // may be starved for most of a run (192% seen once); removing the restart fails every try (about 300%).
  it("keeps the WAL bounded under a steady stream of commits by restarting it", { retry: 2 }, async () => {
    const { db, path } = fileDatabase();
    const restartAfterPages = 64;
    const checkpoints = startBackgroundCheckpoints(db, { intervalMs: 5, restartAfterPages });
    await checkpoints?.ready;
    await commitRows(db, 2_000); // about 8 MiB committed
    const walBytes = statSync(`${path}-wal`).size;
    await checkpoints?.stop();
    // Without restarts the WAL holds every page committed several times over (about 300% of the
    // committed pages, frame headers included, was measured with the restart removed). With them it
    // starts over again and again; how far it has grown when the stream stops depends on how often a
    // busy machine let the worker run (39%, 54% and, with a whole test suite beside it, 104% have been
    // seen), so the bound is half of the no-restart figure, not a tight one.
    expect(walBytes).toBeLessThan(2_000 * PAGE * 1.5);
    expect((db.prepare("SELECT COUNT(*) AS n FROM blobs").get() as { n: number }).n).toBe(2_000);
  });

  it("without the worker, the same commits leave the database file as it was", async () => {
    const { db, path } = fileDatabase();
    db.pragma("wal_autocheckpoint = 0");
    const before = statSync(path).size;
    await commitRows(db, 300);
    await delay(50);
    expect(statSync(path).size).toBe(before);
  });

  it("keeps the process alive while it stops, so whatever follows stop() still runs", () => {
    const directory = mkdtempSync(join(tmpdir(), "sas-checkpoints-"));
    opened.push({ db: openDatabase(":memory:"), directory });
    const script = join(directory, "stop.mts");
    const modules = (name: string) => pathToFileURL(join(process.cwd(), name)).href;
    writeFileSync(
      script,
      `import { openDatabase } from ${JSON.stringify(modules("src/adapters/sqlite/database.ts"))};
       import { startBackgroundCheckpoints } from ${JSON.stringify(modules("laptop/sqlite/background-checkpoints.ts"))};
       const db = openDatabase(${JSON.stringify(join(directory, "child.db"))});
       const checkpoints = startBackgroundCheckpoints(db);
       await checkpoints?.ready;
       await checkpoints?.stop();
       db.close();
       console.log("after stop");`,
    );
    const child = spawnSync(process.execPath, ["--import", "tsx", script], {
      cwd: process.cwd(),
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(child.stderr).toBe("");
    expect(child.stdout.trim()).toBe("after stop");
    expect(child.status).toBe(0);
  });

  it("does nothing for a database in memory, which has no WAL", () => {
    const db = openDatabase(":memory:");
    expect(startBackgroundCheckpoints(db)).toBeUndefined();
    db.close();
  });
});
