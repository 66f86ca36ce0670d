import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteLease } from "../../laptop/sqlite/sqlite-lease.js";
import { SqliteScanJournal } from "../../laptop/sqlite/sqlite-scan-journal.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import type { ScanJournal } from "../../src/ports/scan-journal.js";
import { updateAsRead } from "../../src/state/record-updates.js";
import { journaledScan } from "../../src/supervisor/scan-journal.js";
import { pendingRecord, T0 } from "../support/records.js";
import { TEST_LEASE_MS as LEASE_MS, testSupervisor } from "../support/test-supervisor.js";

/** A database with `expired` attempts whose deadline has passed, and a clock 2 minutes on. */
async function storeWithExpiredAttempts(expired: number) {
  const clock = new VirtualClock(T0);
  const db = openDatabase(":memory:");
  const states = new SqliteStateStore(db);
  for (let i = 0; i < expired; i++) {
    const created = await states.createIfAbsent(pendingRecord(`ord-x${i}`));
    if (!created.created) throw new Error("seeded twice");
    await updateAsRead(states, created.record, "starter", {
      type: "claim",
      now: T0,
      attemptTimeoutMs: 1_000,
    });
  }
  await clock.advance(120_000);
  return { clock, db, states };
}

function journaledSupervisor(
  db: EmbeddedDatabase,
  clock: VirtualClock,
  holder: string,
  journal: ScanJournal,
  logger = new MemoryLogger(),
) {
  const lease = new SqliteLease(db, clock, "supervisor");
  const scan = testSupervisor({ states: new SqliteStateStore(db), lease, clock, holder, logger });
  return journaledScan(scan, { journal, clock, logger, holder });
}

describe("the journaled Supervisor scan", () => {
  it("records each scan it runs: who, when, what it found and what it cost", async () => {
    const { clock, db } = await storeWithExpiredAttempts(3);
    const journal = new SqliteScanJournal(db);
    const report = await journaledSupervisor(db, clock, "sup-a", journal)();
    expect(report).toMatchObject({ skipped: false, scanned: 3, resets: 3 });
    expect(await journal.last()).toEqual({
      holder: "sup-a",
      startedAt: "2026-01-01T00:02:00.000Z",
      finishedAt: "2026-01-01T00:02:00.000Z",
      found: {
        scanned: 3,
        resets: 3,
        toError: 0,
        toCompensation: 0,
        stalled: 0,
        lostRaces: 0,
        truncated: false,
        leaseLost: false,
      },
      cost: { requestUnits: 0, durationMs: report.durationMs, pages: 1 },
    });

    await clock.advance(5_000);
    await journaledSupervisor(db, clock, "sup-a", journal)();
    expect(await journal.last()).toMatchObject({
      finishedAt: "2026-01-01T00:02:05.000Z",
      found: { scanned: 0, resets: 0 },
    });
  });

  it("leaves the last real scan in place when a scan is skipped because another Supervisor holds the lease", async () => {
    const { clock, db } = await storeWithExpiredAttempts(2);
    const journal = new SqliteScanJournal(db);
    await journaledSupervisor(db, clock, "sup-a", journal)();
    const held = await new SqliteLease(db, clock, "supervisor").tryAcquire("sup-a", LEASE_MS);
    expect(held).not.toBeNull();
    await clock.advance(1_000);
    const skipped = await journaledSupervisor(db, clock, "sup-b", journal)();
    expect(skipped.skipped).toBe(true);
    expect(await journal.last()).toMatchObject({ holder: "sup-a", found: { resets: 2 } });
  });

  it("logs a journal that cannot be written, and still returns the scan's report", async () => {
    const { clock, db, states } = await storeWithExpiredAttempts(1);
    const logger = new MemoryLogger();
    const broken: ScanJournal = {
      record: () => Promise.reject(new Error("storage is down")),
      last: async () => null,
    };
    const report = await journaledSupervisor(db, clock, "sup-a", broken, logger)();
    expect(report).toMatchObject({ skipped: false, resets: 1 });
    expect((await states.get("ord-x0"))?.processState).toBe("Pending");
    expect(logger.events("supervisor.journal.failed")).toEqual([
      expect.objectContaining({ level: "error", holder: "sup-a" }),
    ]);
  });
});
