import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { countDurableWork, perOrder } from "../../bench/work-counts.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "work-counts-"));
  dirs.push(dir);
  return dir;
}

/** A database with the durable tables and the given episodes; a state_audit table with `audited` rows unless null. */
function databaseWith(episodes: readonly (readonly object[])[], audited: number | null): string {
  const file = join(freshDir(), "sas.sqlite");
  const db = new Database(file);
  db.exec(`
    CREATE TABLE state_records (order_id TEXT PRIMARY KEY);
    CREATE TABLE df_instances (instance_id TEXT PRIMARY KEY);
    CREATE TABLE df_history (instance_id TEXT, episode INTEGER, events TEXT, PRIMARY KEY (instance_id, episode));`);
  db.prepare("INSERT INTO state_records VALUES ('a'), ('b')").run();
  db.prepare("INSERT INTO df_instances VALUES ('a:1'), ('b:1'), ('b:2')").run();
  const insert = db.prepare("INSERT INTO df_history VALUES (?, ?, ?)");
  for (const [i, events] of episodes.entries()) insert.run("a:1", i + 1, JSON.stringify(events));
  if (audited !== null) {
    db.exec("CREATE TABLE state_audit (id INTEGER PRIMARY KEY, order_id TEXT)");
    for (let i = 0; i < audited; i++) db.prepare("INSERT INTO state_audit (order_id) VALUES ('a')").run();
  }
  db.close();
  return file;
}

const event = (type: number, extra: object = {}) => ({ EventType: type, EventId: -1, ...extra });

describe("durable work from a run's database", () => {
  it("counts episodes, events, bytes, scheduled activities, created timers and audited writes", () => {
    const first = [event(12), event(0, { Name: "örder" }), event(4), event(4), event(10), event(13)];
    const second = [event(12), event(5), event(11), event(4), event(13)];
    const file = databaseWith([first, second], 5);
    expect(countDurableWork(file)).toEqual({
      orders: 2,
      instances: 3,
      episodes: 2,
      historyEvents: 11,
      // UTF-8 bytes: "ö" is two.
      historyBytes: Buffer.byteLength(JSON.stringify(first)) + Buffer.byteLength(JSON.stringify(second)),
      activities: 3,
      timers: 1,
      stateWrites: 5,
    });
  });

  it("has no state-write count when the run kept no audit, and zeros for an empty history", () => {
    expect(countDurableWork(databaseWith([], null))).toMatchObject({
      episodes: 0,
      historyEvents: 0,
      historyBytes: 0,
      activities: 0,
      timers: 0,
      stateWrites: null,
    });
  });

  it("refuses a file that does not exist rather than creating it", () => {
    expect(() => countDurableWork(join(freshDir(), "none.sqlite"))).toThrow();
  });

  it("divides each count by the orders, leaving out the orders and an absent write count", () => {
    const work = {
      orders: 4,
      instances: 4,
      episodes: 24,
      historyEvents: 112,
      historyBytes: 1_000,
      activities: 20,
      timers: 16,
      stateWrites: null,
    };
    expect(perOrder(work, 4)).toEqual({
      instances: 1,
      episodes: 6,
      historyEvents: 28,
      historyBytes: 250,
      activities: 5,
      timers: 4,
    });
    expect(perOrder({ ...work, stateWrites: 28 }, 4).stateWrites).toBe(7);
    expect(() => perOrder(work, 0)).toThrow(RangeError);
  });

  it("agrees with the history a real demo run stored, counted event by event", () => {
    const dir = freshDir();
    const demo = spawnSync(
      process.execPath,
      ["--import", "tsx", "laptop/cli/main.ts", "demo", "--orders", "20", "--json", "--data", dir],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(demo.status, demo.stderr).toBe(0);
    const file = join(dir, "sas.sqlite");
    const work = countDurableWork(file);

    const db = new Database(file, { readonly: true });
    const rows = db.prepare("SELECT events FROM df_history").all() as { events: string }[];
    db.close();
    const events = rows.flatMap((row) => JSON.parse(row.events) as { EventType: number }[]);
    const typed = (type: number) => events.filter((e) => e.EventType === type).length;
    expect(work).toMatchObject({
      orders: 20,
      episodes: rows.length,
      historyEvents: events.length,
      historyBytes: rows.reduce((sum, row) => sum + Buffer.byteLength(row.events), 0),
      activities: typed(4),
      timers: typed(10),
    });
    // Every order is created, orchestrated and does at least one step's activity.
    expect(work.instances).toBeGreaterThanOrEqual(20);
    expect(work.episodes).toBeGreaterThanOrEqual(work.instances);
    expect(work.activities).toBeGreaterThanOrEqual(20);
    expect(work.stateWrites).toBeGreaterThanOrEqual(20);
  }, 60_000);
});
