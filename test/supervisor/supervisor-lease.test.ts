import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import type { Lease, LeaseGrant } from "../../src/ports/lease.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { updateAsRead } from "../../src/state/record-updates.js";
import { pendingRecord, T0 } from "../support/records.js";
import { testSupervisor } from "../support/test-supervisor.js";

/** A lease that grants itself once and then renews only while `renewable` says so. */
function scriptedLease(clock: VirtualClock, renewable: () => boolean) {
  const calls = { renewals: 0, releases: 0 };
  const lease: Lease = {
    name: "supervisor",
    tryAcquire: async (holder, durationMs) => ({
      leaseId: "l-1",
      holder,
      durationMs,
      expiresAt: new Date(clock.now().getTime() + durationMs),
    }),
    renew: async (grant: LeaseGrant) => {
      calls.renewals++;
      return renewable() ? { ...grant, expiresAt: new Date(clock.now().getTime() + grant.durationMs) } : null;
    },
    release: async () => {
      calls.releases++;
    },
  };
  return { lease, calls };
}

/** Three expired attempts in a store whose every write takes 20 s of virtual time. */
async function slowStoreWithExpiredAttempts(
  clock: VirtualClock,
): Promise<{ states: StateStore; ids: string[] }> {
  const store = new SqliteStateStore(openDatabase(":memory:"));
  const ids = ["ord-l-1", "ord-l-2", "ord-l-3"];
  for (const id of ids) {
    const created = await store.createIfAbsent(pendingRecord(id));
    if (!created.created) throw new Error(`${id} was seeded twice`);
    await updateAsRead(store, created.record, "starter", { type: "claim", now: T0, attemptTimeoutMs: 1_000 });
  }
  await clock.advance(60_000);
  const states: StateStore = Object.assign(Object.create(store) as StateStore, {
    replace: async (...args: Parameters<StateStore["replace"]>) => {
      await clock.advance(20_000);
      return store.replace(...args);
    },
  });
  return { states, ids };
}

function supervisorOn(states: StateStore, lease: Lease, clock: VirtualClock) {
  return testSupervisor({ states, lease, clock });
}

describe("the Supervisor's lease during a scan", () => {
  it("renews the lease when half of it has run, and finishes the scan", async () => {
    const clock = new VirtualClock(T0);
    const { states, ids } = await slowStoreWithExpiredAttempts(clock);
    const { lease, calls } = scriptedLease(clock, () => true);
    const report = await supervisorOn(states, lease, clock)();
    expect(report).toMatchObject({ resets: ids.length, leaseLost: false });
    expect(calls.renewals).toBeGreaterThan(0);
    expect(calls.releases).toBe(1);
  });

  it("stops before its next update once the lease is lost, and leaves the rest alone", async () => {
    const clock = new VirtualClock(T0);
    const { states, ids } = await slowStoreWithExpiredAttempts(clock);
    const { lease, calls } = scriptedLease(clock, () => false);
    const report = await supervisorOn(states, lease, clock)();
    expect(report.leaseLost).toBe(true);
    expect(report.resets).toBe(1);
    const untouched = await Promise.all(ids.map((id) => states.get(id)));
    expect(untouched.filter((r) => r?.processState === "Processing")).toHaveLength(ids.length - 1);
    expect(calls.releases).toBe(0); // nothing to release: the lease belongs to someone else now
  });
});

describe("the Supervisor's reach", () => {
  it("recovers an attempt that expired 30 days ago", async () => {
    const clock = new VirtualClock(T0);
    const store = new SqliteStateStore(openDatabase(":memory:"));
    const created = await store.createIfAbsent(pendingRecord("ord-forgotten"));
    if (!created.created) throw new Error("seeded twice");
    await updateAsRead(store, created.record, "starter", { type: "claim", now: T0, attemptTimeoutMs: 1_000 });
    await clock.advance(30 * 24 * 3_600_000);
    const { lease } = scriptedLease(clock, () => true);
    const report = await supervisorOn(store, lease, clock)();
    expect(report.resets).toBe(1);
    expect(await store.get("ord-forgotten")).toMatchObject({ processState: "Pending", lockedBy: null });
  });
});
