import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteLease } from "../../laptop/sqlite/sqlite-lease.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { addMilliseconds } from "../../src/domain/time.js";
import type { OrchestrationStatus, RuntimeStatus } from "../../src/ports/durable-client.js";
import { updateAsRead } from "../../src/state/record-updates.js";
import { cannotJudge, type OrchestrationLookup } from "../../src/supervisor/interruptions.js";
import { pendingRecord, T0 } from "../support/records.js";
import { testSupervisor } from "../support/test-supervisor.js";

const LATE_MS = 15_000;
const EXTENSION_MS = 60_000;

function status(runtimeStatus: RuntimeStatus, output: unknown = null): OrchestrationStatus {
  return {
    instanceId: "ord-1:1",
    name: "orderProcessing",
    runtimeStatus,
    input: null,
    output,
    customStatus: null,
    failure: undefined,
    createdTime: new Date(T0),
    lastUpdatedTime: new Date(T0),
  };
}

/** One order mid-step in attempt 1, with a deadline 30 s after T0, and a Supervisor that asks `lookup`. */
async function expiredAttempt(lookup: OrchestrationLookup) {
  const clock = new VirtualClock(T0);
  const db = openDatabase(":memory:");
  const states = new SqliteStateStore(db);
  const created = await states.createIfAbsent(pendingRecord("ord-1"));
  if (!created.created) throw new Error("seeded twice");
  const claimed = await updateAsRead(states, created.record, "starter", [
    { type: "claim", now: T0, attemptTimeoutMs: 30_000 },
  ]);
  if (!claimed.ok) throw new Error("claim refused");
  const started = await updateAsRead(states, claimed.record, "orchestration", {
    type: "startStep",
    instanceId: "ord-1:1",
    step: "reserveInventory",
    now: T0,
    completeBy: addMilliseconds(T0, 30_000),
    requestedCalls: 3,
    amplification: 1,
  });
  if (!started.ok) throw new Error("start refused");
  const logger = new MemoryLogger();
  const supervisor = testSupervisor({
    states,
    lease: new SqliteLease(db, clock, "supervisor"),
    clock,
    logger,
    interruptions: { lookup, lateTimerMs: LATE_MS, extensionMs: EXTENSION_MS },
  });
  const record = async () => {
    const found = await states.get("ord-1");
    if (!found) throw new Error("record gone");
    return found;
  };
  return { clock, supervisor, logger, record };
}

describe("the Supervisor tells a host's downtime from an attempt out of time", () => {
  it("spares an attempt whose orchestration's timer fired long after the deadline: no failure counted", async () => {
    const s = await expiredAttempt(async () =>
      status("Completed", { outcome: "timedOut", lateByMs: 90_000 }),
    );
    await s.clock.advance(120_000);
    const report = await s.supervisor();
    expect(report).toMatchObject({ resets: 1, spared: 1 });
    const record = await s.record();
    expect(record).toMatchObject({ processState: "Pending", failureCount: 0, hostInterruptions: 1 });
    expect(record.lastError?.code).toBe("HostInterrupted");
    expect(record.steps[0]?.status).toBe("InDoubt");
    const line = s.logger.lines.find((l) => l.event === "supervisor.recovered");
    expect(line).toMatchObject({ orderId: "ord-1", attempt: 1, charged: false });
  });

  it("charges an attempt whose timer fired on time: it really ran out of time", async () => {
    const s = await expiredAttempt(async () => status("Completed", { outcome: "timedOut", lateByMs: 40 }));
    await s.clock.advance(120_000);
    expect(await s.supervisor()).toMatchObject({ resets: 1, spared: 0 });
    expect(await s.record()).toMatchObject({ failureCount: 1, hostInterruptions: 0 });
  });

  it("charges when the orchestration ended otherwise, is gone, or cannot be read", async () => {
    const lookups: OrchestrationLookup[] = [
      async () => status("Completed", { outcome: "gaveUp", step: "reserveInventory" }),
      async () => status("Failed"),
      async () => undefined,
      async () => {
        throw new Error("task hub unavailable");
      },
    ];
    for (const lookup of lookups) {
      const s = await expiredAttempt(lookup);
      await s.clock.advance(120_000);
      await s.supervisor();
      expect(await s.record()).toMatchObject({ failureCount: 1, hostInterruptions: 0 });
    }
  });

  it("gives a still-running attempt its deadline again once it is well past it, and leaves one just past it", async () => {
    const s = await expiredAttempt(async () => status("Running"));
    await s.clock.advance(30_000 + LATE_MS - 1_000);
    expect(await s.supervisor()).toMatchObject({ waiting: 1, extended: 0, resets: 0 });
    expect((await s.record()).completeBy).toBe(addMilliseconds(T0, 30_000));

    await s.clock.advance(2_000);
    const now = s.clock.now().toISOString();
    expect(await s.supervisor()).toMatchObject({ extended: 1, resets: 0 });
    const extended = await s.record();
    expect(extended).toMatchObject({
      processState: "Processing",
      lockedBy: "ord-1:1",
      completeBy: addMilliseconds(now, EXTENSION_MS),
      failureCount: 0,
      hostInterruptions: 1,
    });
    expect(
      s.logger.lines.some((l) => l.event === "supervisor.deadline-extended" && l.orderId === "ord-1"),
    ).toBe(true);
    // Not expired any more: the next scan leaves it alone.
    expect(await s.supervisor()).toMatchObject({ scanned: 0 });
  });

  it("charges a running attempt once the order has used up its interruptions", async () => {
    const s = await expiredAttempt(async () => status("Running"));
    for (let n = 1; n <= 10; n++) {
      await s.clock.advance(EXTENSION_MS + LATE_MS);
      expect(await s.supervisor()).toMatchObject({ extended: 1 });
    }
    await s.clock.advance(EXTENSION_MS + LATE_MS);
    expect(await s.supervisor()).toMatchObject({ extended: 0, resets: 1, spared: 0 });
    expect(await s.record()).toMatchObject({ failureCount: 1, hostInterruptions: 10 });
  });
});

describe("F24-9: what the Supervisor cannot or should not judge, it leaves as it is", () => {
  it("leaves an attempt whose orchestration an operator suspended: not recovered, not extended, not charged", async () => {
    const s = await expiredAttempt(async () => status("Suspended"));
    const before = await s.record();
    await s.clock.advance(600_000);
    expect(await s.supervisor()).toMatchObject({ suspended: 1, resets: 0, extended: 0, spared: 0 });
    expect(await s.record()).toEqual(before);
    expect(s.logger.events("supervisor.recovery.suspended")).toEqual([
      expect.objectContaining({ orderId: "ord-1", attempt: 1, expiredOwner: "ord-1:1" }),
    ]);
  });

  it("leaves every expired attempt unjudged when its run has no durable client to ask: nothing charged", async () => {
    const s = await expiredAttempt(cannotJudge("the Supervisor's invocation has no durable client"));
    const before = await s.record();
    await s.clock.advance(120_000);
    expect(await s.supervisor()).toMatchObject({ unjudged: 1, resets: 0, extended: 0 });
    expect(await s.record()).toEqual(before);
    expect(s.logger.events("supervisor.recovery.unjudged")).toEqual([
      expect.objectContaining({
        orderId: "ord-1",
        attempt: 1,
        reason: "the Supervisor's invocation has no durable client",
      }),
    ]);
  });
});
