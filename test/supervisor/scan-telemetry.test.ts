import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteLease } from "../../laptop/sqlite/sqlite-lease.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { T0 } from "../support/records.js";
import { type RecordedTelemetry, recordTelemetry, spansNamed } from "../support/telemetry.js";
import { testSupervisor } from "../support/test-supervisor.js";

let recorded: RecordedTelemetry | undefined;
afterEach(async () => {
  await recorded?.shutdown();
});

describe("the Supervisor's telemetry", () => {
  it("traces and measures the scan of the lease holder only: a tick that finds the lease held makes nothing", async () => {
    recorded = recordTelemetry();
    const db = openDatabase(":memory:");
    const clock = new VirtualClock(T0);
    const states = new SqliteStateStore(db);
    const lease = new SqliteLease(db, clock, "supervisor");
    const telemetry = recorded.telemetry;
    const first = testSupervisor({ states, lease, clock, holder: "sup-1", telemetry });
    const second = testSupervisor({ states, lease, clock, holder: "sup-2", telemetry });
    // sup-1 takes the lease and keeps it (a scan's lease outlives the scan until it expires or is released).
    const held = await lease.tryAcquire("sup-1", 60_000);
    expect(held).not.toBeNull();
    expect((await second()).skipped).toBe(true);
    expect(spansNamed(recorded.spans(), "supervisor.scan")).toEqual([]);
    expect(await recorded.points("sas.supervisor.scan.duration")).toEqual([]);
    if (held) await lease.release(held);
    expect((await first()).skipped).toBe(false);
    const [scan] = spansNamed(recorded.spans(), "supervisor.scan");
    expect(scan?.attributes).toMatchObject({ "sas.supervisor.holder": "sup-1", "sas.supervisor.scanned": 0 });
    const [duration] = await recorded.points("sas.supervisor.scan.duration");
    expect((duration?.value as { count: number } | undefined)?.count).toBe(1);
    db.close();
  });
});
