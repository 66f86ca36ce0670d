import { afterEach, describe, expect, it, vi } from "vitest";
import { captureRegistrations } from "../../laptop/worker/registration-capture.js";
import { InstanceAlreadyRunningError } from "../../src/ports/durable-client.js";
import { registerTestApp, TEST_ORCHESTRATIONS as T } from "../support/durable-test-app.js";
import { type Harness, openHarness, START } from "./runtime-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.runtime.close();
  harness?.db.close();
  harness = undefined;
});

async function open(options?: Parameters<typeof openHarness>[0]): Promise<Harness> {
  harness = await openHarness(options);
  return harness;
}

describe("registrations", () => {
  it("captures the app's df.app registrations with their trigger types, as the host would see them", async () => {
    const registry = await captureRegistrations(() => registerTestApp({ calls: [] }));
    const orchestrations = registry.withTrigger("orchestrationTrigger").map((f) => f.name);
    const activities = registry.withTrigger("activityTrigger").map((f) => f.name);
    expect(orchestrations).toEqual(expect.arrayContaining(Object.values(T)));
    expect(activities.sort()).toEqual(["blockingDouble", "double", "explode", "nothing", "send"]);
  });
});

describe("running orchestrations", () => {
  it("runs a five-activity sequence through the SDK's replay and records its history", async () => {
    const { runtime, deps } = await open();
    await runtime.startNew(T.sequence, { instanceId: "seq-1", input: 3 });
    const status = await runtime.waitForCompletion("seq-1");
    expect(status).toMatchObject({ runtimeStatus: "Completed", output: 96, input: 3, name: T.sequence });
    // What the waiter was handed is what the store says, field for field.
    expect(status).toEqual(await runtime.getStatus("seq-1"));
    expect(deps.calls).toEqual(["double(3)", "double(6)", "double(12)", "double(24)", "double(48)"]);
    const types = runtime.historyOf("seq-1").map((e) => e.EventType);
    expect(types.filter((t) => t === 4)).toHaveLength(5); // TaskScheduled
    expect(types.filter((t) => t === 5)).toHaveLength(5); // TaskCompleted
    expect(types.at(-1)).toBe(1); // ExecutionCompleted
  });

  it.each([
    ["full replays", false],
    ["replay sessions", true],
  ])(
    "takes the reply branch when the reply beats the timer, and cancels the timer (%s)",
    async (_, replaySessions) => {
      const { runtime, clock } = await open({ replaySessions });
      await runtime.startNew(T.race, {
        instanceId: "race-reply",
        input: { step: "charge", timeoutMs: 60_000 },
      });
      await runtime.idle();
      expect((await runtime.getStatus("race-reply"))?.runtimeStatus).toBe("Running");
      await clock.advance(59_999);
      await runtime.idle();
      expect(await runtime.raiseEvent("race-reply", "reply-charge", { ok: true })).toEqual({
        delivered: true,
      });
      const status = await runtime.waitForCompletion("race-reply");
      expect(status.output).toEqual({ outcome: "reply", value: { ok: true } });
      expect(clock.pendingSleeps).toBe(1); // the cancelled timer's sleep; firing it now changes nothing
      await clock.advance(10);
      await runtime.idle();
      expect(runtime.historyOf("race-reply").filter((e) => e.EventType === 11)).toHaveLength(0); // no TimerFired
    },
  );

  // With sessions, the tasks the SDK numbered are kept from episode to episode: the cancellation of one
  // numbered in an earlier episode must still be seen.
  it.each([
    ["full replays", false],
    ["replay sessions", true],
  ])(
    "disarms a timer cancelled in a later episode than the one that armed it, while the instance runs on (%s)",
    async (_, replaySessions) => {
      const { runtime, clock, db } = await open({ replaySessions });
      await runtime.startNew(T.raceTwice, { instanceId: "twice", input: 60_000 });
      await runtime.idle();
      await clock.advance(10_000);
      await runtime.raiseEvent("twice", "first", "yes");
      await runtime.idle();
      const armed = db.prepare("SELECT timer_id AS timerId FROM df_timers WHERE instance_id = 'twice'").all();
      expect(armed).toEqual([{ timerId: 1 }]); // the first (task 0) is gone, the second waits
      await clock.advance(60_000);
      const status = await runtime.waitForCompletion("twice");
      expect(status.output).toEqual(["first: reply", "second: timeout"]);
      const fired = runtime.historyOf("twice").filter((e) => e.EventType === 11);
      expect(fired.map((e) => e.TimerId)).toEqual([1]);
    },
  );

  it("takes the timeout branch when the timer fires first, at the deadline and not before", async () => {
    const { runtime, clock } = await open();
    await runtime.startNew(T.race, {
      instanceId: "race-timeout",
      input: { step: "ship", timeoutMs: 600_000 },
    });
    await runtime.idle();
    await clock.advance(599_999);
    await runtime.idle();
    expect((await runtime.getStatus("race-timeout"))?.runtimeStatus).toBe("Running");
    await clock.advance(1);
    const status = await runtime.waitForCompletion("race-timeout");
    expect(status.output).toEqual({ outcome: "timeout", at: "2026-03-01T10:10:00.000Z" });
  });

  it("drops and reports a reply that arrives after the timer won", async () => {
    const { runtime, clock, logger } = await open();
    await runtime.startNew(T.race, { instanceId: "race-late", input: { step: "pay", timeoutMs: 1_000 } });
    await runtime.idle();
    await clock.advance(1_000);
    await runtime.waitForCompletion("race-late");
    expect(await runtime.raiseEvent("race-late", "reply-pay", { ok: true })).toEqual({
      delivered: false,
      reason: "notRunning",
    });
    expect(await runtime.raiseEvent("nobody", "reply-pay", {})).toEqual({
      delivered: false,
      reason: "notFound",
    });
    expect(logger.events("durable.event.dropped").map((l) => l.instanceId)).toEqual(["race-late", "nobody"]);
    expect((await runtime.getStatus("race-late"))?.output).toMatchObject({ outcome: "timeout" });
  });

  it("delivers an event raised before anyone waits to the later wait", async () => {
    const { runtime, clock } = await open();
    await runtime.startNew(T.lateWaiter, { instanceId: "late-1" });
    await runtime.idle();
    expect(await runtime.raiseEvent("late-1", "early", "hello")).toEqual({ delivered: true });
    await runtime.idle();
    expect((await runtime.getStatus("late-1"))?.runtimeStatus).toBe("Running");
    await clock.advance(60_000);
    expect((await runtime.waitForCompletion("late-1")).output).toEqual({ early: "hello" });
  });

  it("surfaces a throwing activity in the orchestrator as a catchable error with its message", async () => {
    const { runtime } = await open();
    await runtime.startNew(T.catcher, { instanceId: "catch-1" });
    const status = await runtime.waitForCompletion("catch-1");
    expect(status.runtimeStatus).toBe("Completed");
    expect((status.output as { caught: string }).caught).toContain("partner refused: out of stock");
  });

  it("completes an activity that returns nothing", async () => {
    const { runtime } = await open();
    await runtime.startNew(T.voidActivity, { instanceId: "void-1" });
    const status = await runtime.waitForCompletion("void-1");
    expect(status).toMatchObject({ runtimeStatus: "Completed", output: { result: "nothing came back" } });
  });

  it("fans out with Task.all and runs the activities concurrently", async () => {
    const { runtime, deps } = await open();
    await runtime.startNew(T.fanOut, { instanceId: "fan-1", input: 20 });
    expect((await runtime.waitForCompletion("fan-1")).output).toBe(380);
    expect(deps.calls).toHaveLength(20);
  });

  it("fails an instance whose orchestrator lets an error escape, keeping the message", async () => {
    const { runtime, logger } = await open();
    await runtime.startNew(T.unhandled, { instanceId: "unhandled-1" });
    const status = await runtime.waitForCompletion("unhandled-1");
    expect(status.runtimeStatus).toBe("Failed");
    expect(status.failure).toContain("partner refused: card declined");
    expect(runtime.historyOf("unhandled-1").at(-1)).toMatchObject({
      EventType: 1,
      OrchestrationStatus: "Failed",
    });
    expect(logger.events("durable.instance.failed")).toHaveLength(1);
  });
});

describe("unsupported features", () => {
  it("fails an instance that enters a critical section on entities, saying so, rather than ignoring it", async () => {
    const { runtime, deps } = await open();
    await runtime.startNew(T.entityLocker, { instanceId: "entity-1" });
    const status = await runtime.waitForCompletion("entity-1");
    expect(status.runtimeStatus).toBe("Failed");
    expect(status.failure).toBe("the local durable runtime does not support LockEntities actions");
    expect(deps.calls).toEqual([]);
  });
});

describe("the client", () => {
  it("never runs activities queued for an execution that was terminated or replaced meanwhile", async () => {
    let release = () => {};
    const deps = { calls: [] as string[], gate: new Promise<void>((resolve) => (release = resolve)) };
    const { runtime } = await open({ deps, maxConcurrentActivities: 1 });
    // The blocker holds the only activity slot, so the fan-outs' activities wait in the queue.
    await runtime.startNew(T.blockingSequence, { instanceId: "blocker", input: 1 });
    await runtime.startNew(T.fanOut, { instanceId: "gone", input: 3 });
    await runtime.startNew(T.fanOut, { instanceId: "again", input: 4 });
    await vi.waitFor(() => {
      for (const id of ["gone", "again"])
        expect(runtime.historyOf(id).filter((e) => e.EventType === 4).length).toBeGreaterThan(0);
    });
    await runtime.terminate("gone", "operator stop");
    await runtime.terminate("again", "operator stop");
    await runtime.startNew(T.sequence, { instanceId: "again", input: 100 });
    release();
    expect((await runtime.waitForCompletion("again")).output).toBe(3_200);
    expect((await runtime.waitForCompletion("blocker")).output).toBe(4);
    // Only the blocker's and the new sequence's activities ran; none of the fan-outs' (double(0) ...).
    expect([...deps.calls].sort()).toEqual(
      [
        "blockingDouble(1)",
        "double(100)",
        "double(200)",
        "double(400)",
        "double(800)",
        "double(1600)",
        "double(2)",
      ].sort(),
    );
  });

  it("refuses to start an instance id that is running, and restarts a finished one", async () => {
    const { runtime } = await open();
    await runtime.startNew(T.lateWaiter, { instanceId: "dup-1" });
    await expect(runtime.startNew(T.sequence, { instanceId: "dup-1", input: 1 })).rejects.toBeInstanceOf(
      InstanceAlreadyRunningError,
    );
    await runtime.terminate("dup-1", "operator stop");
    const terminated = await runtime.waitForCompletion("dup-1");
    expect(terminated).toMatchObject({ runtimeStatus: "Terminated", output: "operator stop" });
    await runtime.startNew(T.sequence, { instanceId: "dup-1", input: 1 });
    expect((await runtime.waitForCompletion("dup-1")).output).toBe(32);
  });

  it("rejects unknown orchestrations and malformed instance ids", async () => {
    const { runtime } = await open();
    await expect(runtime.startNew("nope", { instanceId: "x" })).rejects.toThrow(
      /no orchestration named nope/,
    );
    await expect(runtime.startNew(T.sequence, { instanceId: "a/b" })).rejects.toThrow(RangeError);
    await expect(runtime.startNew(T.sequence, { instanceId: "" })).rejects.toThrow(RangeError);
    for (const instanceId of ["a\\b", "a#b", "a?b", "a\tb", "a\u007fb", "a\u0085b", "x".repeat(101)]) {
      await expect(runtime.startNew(T.sequence, { instanceId })).rejects.toThrow(RangeError);
    }
    for (const instanceId of ["ord-1:1", "caf\u00e9-\u{1f600}", "y".repeat(100)]) {
      await expect(runtime.startNew(T.sequence, { instanceId, input: 1 })).resolves.toBe(instanceId);
    }
  });

  it("reports status with timestamps from the runtime's clock, and purges", async () => {
    const { runtime } = await open();
    await runtime.startNew(T.sequence, { instanceId: "st-1", input: 1 });
    const status = await runtime.waitForCompletion("st-1");
    expect(status.createdTime.toISOString()).toBe(START);
    expect(await runtime.purge("st-1")).toBe(true);
    expect(await runtime.getStatus("st-1")).toBeUndefined();
    expect(runtime.historyOf("st-1")).toEqual([]);
    expect(await runtime.purge("st-1")).toBe(false);
  });
});

describe("determinism", () => {
  it("fails a changed orchestrator replaying an old history, naming the first mismatch", async () => {
    const { path, remove } = (await import("./runtime-harness.js")).temporaryDatabasePath();
    try {
      const v1 = await openHarness({ path, variant: "v1" });
      await v1.runtime.startNew(T.evolving, { instanceId: "evo-1" });
      await v1.runtime.idle();
      await v1.runtime.close();
      v1.db.close();

      const v2 = await open({ path, variant: "v2" });
      await v2.runtime.raiseEvent("evo-1", "continue");
      const status = await v2.runtime.waitForCompletion("evo-1");
      expect(status.runtimeStatus).toBe("Failed");
      expect(status.failure).toBe(
        "non-deterministic orchestration: task 0 was activity double in history, but replay scheduled activity send",
      );
    } finally {
      remove();
    }
  });

  it("catches an orchestrator that reads the clock or random numbers", async () => {
    const { runtime } = await open();
    await runtime.startNew(T.clockReader, { instanceId: "clock-1" });
    await runtime.idle();
    await runtime.raiseEvent("clock-1", "continue");
    const status = await runtime.waitForCompletion("clock-1");
    expect(status.runtimeStatus).toBe("Failed");
    expect(status.failure).toMatch(
      /^non-deterministic orchestration: task 0 was timer at .* but replay scheduled timer at/,
    );
  });
});
