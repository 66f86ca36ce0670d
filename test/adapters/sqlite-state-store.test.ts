import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  COUNT_QUERIES,
  PAGED_QUERIES,
  RETENTION_QUERIES,
  SqliteStateStore,
  STATS_QUERIES,
} from "../../laptop/sqlite/sqlite-state-store.js";
import { openDatabase, schemaVersion } from "../../src/adapters/sqlite/database.js";
import { MIGRATIONS } from "../../src/adapters/sqlite/migrations.js";
import { describeRetentionStoreContract } from "../contracts/retention-store.contract.js";
import { describeStateReadModelContract } from "../contracts/state-read-model.contract.js";
import { describeStateStoreContract } from "../contracts/state-store.contract.js";
import type { StateStoreFixture } from "../contracts/state-store-fixture.js";
import { pendingRecord } from "../support/records.js";

type SqliteFixture = StateStoreFixture<SqliteStateStore>;

async function inMemory(): Promise<SqliteFixture> {
  const db = openDatabase(":memory:");
  return { store: new SqliteStateStore(db), dispose: async () => void db.close() };
}

async function fileWithTwoConnections(): Promise<SqliteFixture> {
  const dir = mkdtempSync(join(tmpdir(), "sas-state-"));
  const path = join(dir, "state.sqlite");
  const db = openDatabase(path);
  const others: ReturnType<typeof openDatabase>[] = [];
  return {
    store: new SqliteStateStore(db),
    secondHandle: async () => {
      const other = openDatabase(path);
      others.push(other);
      return new SqliteStateStore(other);
    },
    dispose: async () => {
      for (const other of others) other.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

for (const [name, fixture] of [
  ["SQLite in memory", inMemory],
  ["SQLite file, two connections", fileWithTwoConnections],
] as const) {
  describeStateStoreContract(name, fixture);
  describeStateReadModelContract(name, fixture);
  describeRetentionStoreContract(name, fixture);
}

describe("SQLite database file", () => {
  it("is in WAL mode, migrated once, and keeps records across reopening", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sas-db-"));
    const path = join(dir, "state.sqlite");
    try {
      const db = openDatabase(path);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(schemaVersion(db)).toBe(MIGRATIONS.length);
      await new SqliteStateStore(db).createIfAbsent(pendingRecord("ord-kept"));
      db.close();
      const reopened = openDatabase(path);
      expect(schemaVersion(reopened)).toBe(MIGRATIONS.length);
      expect((await new SqliteStateStore(reopened).get("ord-kept"))?.orderId).toBe("ord-kept");
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("applies only the migrations a file has not seen, and refuses a file from newer code", () => {
    const dir = mkdtempSync(join(tmpdir(), "sas-db-"));
    const path = join(dir, "state.sqlite");
    try {
      const extra = {
        version: MIGRATIONS.length + 1,
        description: "extra",
        sql: "CREATE TABLE extra (x INTEGER)",
      };
      openDatabase(path).close();
      const upgraded = openDatabase(path, { migrations: [...MIGRATIONS, extra] });
      expect(schemaVersion(upgraded)).toBe(extra.version);
      upgraded.close();
      expect(() => openDatabase(path)).toThrow(/newer than this code knows/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("SQLite paged queries", () => {
  /** The plan of a paged query on a file with many records that do not match, after ANALYZE. */
  function planOf(query: keyof typeof PAGED_QUERIES): string[] {
    const db = openDatabase(":memory:");
    try {
      const insert = db.prepare(
        `INSERT INTO state_records (order_id, etag, process_state, locked_by, complete_by, not_before, document)
         VALUES (?, 'e', ?, ?, ?, '2026-01-01T00:00:00.000Z', '{}')`,
      );
      db.transaction(() => {
        for (let i = 0; i < 2_000; i++) insert.run(`done-${i}`, "Processed", null, null);
        for (let i = 0; i < 200; i++) {
          insert.run(`busy-${i}`, "Processing", `busy-${i}:1`, "2026-01-01T00:01:00.000Z");
        }
      })();
      db.exec("ANALYZE");
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${PAGED_QUERIES[query]}`).all("x", "", "", 10) as {
        detail: string;
      }[];
      return plan.map((row) => row.detail);
    } finally {
      db.close();
    }
  }

  it("reads the expired page from the partial index of owned records, in order: no scan, no sort", () => {
    expect(planOf("expired")).toEqual([
      expect.stringMatching(/^SEARCH state_records USING INDEX state_records_expired \(/),
    ]);
  });

  it("reads the claimable page from the partial index of claimable records, in order", () => {
    expect(planOf("claimable")).toEqual([
      expect.stringMatching(/^SEARCH state_records USING INDEX state_records_claimable \(/),
    ]);
  });
});

describe("SQLite statistics queries", () => {
  /** The plan of a statistics query on a file with many records in every state, after ANALYZE. */
  function planOf(
    query: keyof typeof STATS_QUERIES | keyof typeof COUNT_QUERIES | "retired",
    ...parameters: (string | number)[]
  ): string[] {
    const db = openDatabase(":memory:");
    try {
      const insert = db.prepare(
        `INSERT INTO state_records (order_id, etag, process_state, locked_by, complete_by, not_before, updated_at, progress_at, document)
         VALUES (?, 'e', ?, NULL, NULL, '2026-01-01T00:00:00.000Z', ?, ?, '{}')`,
      );
      const states = ["Processed", "Pending", "Error", "Processing", "Compensated"];
      db.transaction(() => {
        for (let i = 0; i < 3_000; i++) {
          const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
          insert.run(`ord-${i}`, states[i % states.length], at, at);
        }
      })();
      db.exec("ANALYZE");
      const sql =
        query === "retired"
          ? RETENTION_QUERIES.retired
          : query in STATS_QUERIES
            ? STATS_QUERIES[query as keyof typeof STATS_QUERIES]
            : COUNT_QUERIES[query as keyof typeof COUNT_QUERIES];
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters) as {
        detail: string;
      }[];
      return plan.map((row) => row.detail);
    } finally {
      db.close();
    }
  }

  it("F24-4: finds the Pending record waiting longest as the first entry of the Pending records' index by progress: no sort", () => {
    expect(planOf("oldestPending")).toEqual([
      "SCAN state_records USING COVERING INDEX state_records_pending_by_progress",
    ]);
  });

  it("counts the records of each state from the by-state index alone, with no index kept for nothing", () => {
    expect(planOf("byState")).toEqual([
      "SCAN state_records USING COVERING INDEX state_records_recent_by_state",
    ]);
    for (const query of ["inState", "processing"] as const) {
      expect(planOf(query, ...(query === "inState" ? ["Pending"] : []))).toEqual([
        "SEARCH state_records USING COVERING INDEX state_records_recent_by_state (process_state=?)",
      ]);
    }
    const db = openDatabase(":memory:");
    try {
      const indexes = db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'state_records' AND sql IS NOT NULL",
        )
        .all() as { name: string }[];
      // Each is read by a query above or by the claim and recovery pages; every record write keeps them all.
      expect(indexes.map((i) => i.name).sort()).toEqual([
        "state_records_claimable",
        "state_records_expired",
        "state_records_pending_by_progress",
        "state_records_recent",
        "state_records_recent_by_state",
      ]);
    } finally {
      db.close();
    }
  });

  it("reads retention's batch from one range of the by-state index per retired state: no scan, no sort", () => {
    expect(planOf("retired", "2026-01-01T00:10:00.000Z", 100)).toEqual([
      "SEARCH state_records USING INDEX state_records_recent_by_state (process_state=? AND updated_at<?)",
    ]);
  });

  it("counts a window's finished records from one range of the index per terminal state", () => {
    expect(planOf("finished", "2026-01-01T00:10:00.000Z", "2026-01-01T00:11:00.000Z")).toEqual([
      "SEARCH state_records USING COVERING INDEX state_records_recent_by_state (process_state=? AND updated_at>? AND updated_at<?)",
    ]);
  });

  it("counts an hour's finished records per minute from the same ranges, grouped without a scan", () => {
    expect(planOf("finishedPerMinute", "2026-01-01T00:10:00.000Z", "2026-01-01T01:10:00.000Z")).toEqual([
      "SEARCH state_records USING COVERING INDEX state_records_recent_by_state (process_state=? AND updated_at>? AND updated_at<?)",
      "USE TEMP B-TREE FOR GROUP BY",
    ]);
  });
});

describe("F24-10: SQLite tombstones read back", () => {
  /** A store whose `retired_orders` holds `row` for order `ord-t`, as if written there. */
  function withTombstoneRow(row: Record<string, unknown>) {
    const db = openDatabase(":memory:");
    db.prepare(
      `INSERT INTO retired_orders (order_id, final_state, attempt, retired_at, purged_at, reply_to, reply_to_kept)
       VALUES (@order_id, @final_state, @attempt, @retired_at, @purged_at, @reply_to, @reply_to_kept)`,
    ).run({
      order_id: "ord-t",
      final_state: "Processed",
      attempt: 2,
      retired_at: "2026-01-02T00:00:00.000Z",
      purged_at: "2026-02-02T00:00:00.000Z",
      reply_to: "status-app",
      reply_to_kept: 1,
      ...row,
    });
    return { store: new SqliteStateStore(db), close: () => db.close() };
  }

  it("are checked, and one that is not a tombstone fails with an error naming its row and each bad column", async () => {
    const good = withTombstoneRow({});
    expect(await good.store.getRetired("ord-t")).toEqual({
      orderId: "ord-t",
      finalState: "Processed",
      attempt: 2,
      retiredAt: "2026-01-02T00:00:00.000Z",
      purgedAt: "2026-02-02T00:00:00.000Z",
      replyTo: "status-app",
    });
    good.close();
    for (const [row, problem] of [
      [{ final_state: "Finished" }, /finalState: /],
      [{ attempt: "two" }, /attempt: /],
      [{ retired_at: "yesterday" }, /retiredAt: /],
      [{ reply_to_kept: 7 }, /reply_to_kept: /],
    ] as const) {
      const bad = withTombstoneRow(row);
      try {
        await expect(bad.store.getRetired("ord-t")).rejects.toThrow(
          /^invalid retired_orders row of order "ord-t": /,
        );
        await expect(bad.store.getRetired("ord-t")).rejects.toThrow(problem);
      } finally {
        bad.close();
      }
    }
  });

  it("F24-8: read one written before tombstones kept replyTo as of unknown replyTo", async () => {
    const old = withTombstoneRow({ reply_to: null, reply_to_kept: 0 });
    try {
      expect(await old.store.getRetired("ord-t")).not.toHaveProperty("replyTo");
    } finally {
      old.close();
    }
  });
});
