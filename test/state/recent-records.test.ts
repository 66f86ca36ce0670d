import { describe, expect, it } from "vitest";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import type { StoredStateRecord } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { RecentRecords } from "../../src/state/recent-records.js";
import { updateRecord } from "../../src/state/record-updates.js";
import { pendingRecord, T0 } from "../support/records.js";

/** SQLite in memory, counting the reads that reach it. */
function countedStore() {
  const inner = new SqliteStateStore(openDatabase(":memory:"));
  const reads = { count: 0 };
  const store: StateStore = Object.assign(Object.create(inner) as StateStore, {
    get: async (orderId: string) => {
      reads.count++;
      return inner.get(orderId);
    },
  });
  return { store, reads };
}

const claim = { type: "claim", now: T0, attemptTimeoutMs: 60_000 } as const;

async function claimedBy(states: StateStore, orderId: string): Promise<StoredStateRecord> {
  await states.createIfAbsent(pendingRecord(orderId));
  const outcome = await updateRecord(states, orderId, "starter", () => claim);
  if (!outcome.ok) throw new Error(outcome.reason);
  return outcome.record;
}

const startStep = (instanceId: string) =>
  ({
    type: "startStep",
    instanceId,
    step: "reserveInventory",
    now: T0,
    completeBy: addMilliseconds(T0, 5_000),
    requestedCalls: 3,
    amplification: 1,
  }) as const;

describe("RecentRecords: an update starts from the version this process last wrote", () => {
  it("reads nothing before an update of a record it wrote", async () => {
    const { store, reads } = countedStore();
    const states = new RecentRecords(store);
    const claimed = await claimedBy(states, "ord-1");
    const before = reads.count;
    const outcome = await updateRecord(states, "ord-1", "orchestration", () =>
      startStep(claimed.lockedBy ?? ""),
    );
    expect(outcome).toMatchObject({ ok: true, changed: true });
    expect(reads.count).toBe(before);
    expect((await store.get("ord-1"))?.steps[0]?.status).toBe("Running");
  });

  it("reads the stored record when another writer changed it since: nothing is lost", async () => {
    const { store, reads } = countedStore();
    const states = new RecentRecords(store);
    const claimed = await claimedBy(states, "ord-1");
    // Another process changes the record behind this one's back.
    const elsewhere = await store.replace({ ...claimed, replyTo: "status-elsewhere" }, claimed._etag);
    if (!elsewhere.ok) throw elsewhere.error;
    const before = reads.count;
    const outcome = await updateRecord(states, "ord-1", "orchestration", () =>
      startStep(claimed.lockedBy ?? ""),
    );
    expect(outcome).toMatchObject({ ok: true, changed: true });
    expect(reads.count).toBe(before + 1);
    const stored = await store.get("ord-1");
    expect(stored?.steps[0]?.status).toBe("Running");
    expect(stored?.replyTo).toBe("status-elsewhere");
  });

  it("judges a refusal again on the stored record: a remembered version out of date refuses nothing", async () => {
    const { store } = countedStore();
    const states = new RecentRecords(store);
    const first = await claimedBy(states, "ord-1");
    // Elsewhere, the attempt was given back and the order claimed again by attempt 2.
    const again = await store.replace({ ...first, attempt: 2, lockedBy: "ord-1:2" }, first._etag);
    if (!again.ok) throw again.error;
    // The remembered version says attempt 1 owns the record; the stored one says attempt 2.
    expect(states.recent("ord-1")?.lockedBy).toBe(first.lockedBy);
    const outcome = await updateRecord(states, "ord-1", "orchestration", () => startStep("ord-1:2"));
    expect(outcome).toMatchObject({ ok: true, changed: true });
    expect((await store.get("ord-1"))?.steps[0]).toMatchObject({ status: "Running", attempt: 2 });
  });

  it("forgets records that reach a terminal state, and the oldest beyond its capacity", async () => {
    const { store } = countedStore();
    const states = new RecentRecords(store, 2);
    for (const id of ["ord-1", "ord-2", "ord-3"]) await claimedBy(states, id);
    expect(states.recent("ord-1")).toBeUndefined();
    expect(states.recent("ord-3")?.processState).toBe("Processing");
    const current = states.recent("ord-3");
    if (!current) throw new Error("ord-3 not remembered");
    await states.replace(
      { ...current, processState: "Error", lockedBy: null, completeBy: null },
      current._etag,
    );
    expect(states.recent("ord-3")).toBeUndefined();
  });
});
