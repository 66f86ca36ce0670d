import { afterEach, describe, expect, it } from "vitest";
import { EventType, type HistoryEvent } from "../../laptop/durable/history.js";
import { LocalDurableRuntime } from "../../laptop/durable/local-durable-runtime.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { captureRegistrations } from "../../laptop/worker/registration-capture.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import {
  FEATURES as F,
  type FeatureAppDeps,
  RETRY,
  registerFeatureApp,
} from "../support/durable-feature-app.js";
import { START, temporaryDatabasePath } from "./runtime-harness.js";

interface Features {
  readonly runtime: LocalDurableRuntime;
  readonly clock: VirtualClock;
  readonly deps: FeatureAppDeps;
  readonly logger: MemoryLogger;
}

const opened: LocalDurableRuntime[] = [];
afterEach(() => {
  // Halted, not closed: some tests leave an activity waiting forever, which a close would wait for.
  for (const runtime of opened.splice(0)) runtime.halt();
});

async function open(
  options: { path?: string; clock?: VirtualClock; deps?: FeatureAppDeps; sessions?: boolean } = {},
): Promise<Features> {
  const deps = options.deps ?? { calls: [], failuresLeft: new Map() };
  const registry = await captureRegistrations(() => registerFeatureApp(deps));
  const clock = options.clock ?? new VirtualClock(START);
  const logger = new MemoryLogger();
  const runtime = LocalDurableRuntime.open({
    db: openDatabase(options.path ?? ":memory:"),
    clock,
    registry,
    logger,
    ...(options.sessions ? { replaySessions: true } : {}),
  });
  opened.push(runtime);
  return { runtime, clock, deps, logger };
}

/** Advances the virtual clock in steps, letting the runtime settle after each, until the instance ends. */
async function runToEnd(f: Features, instanceId: string, stepMs = 500, maxSteps = 200) {
  for (let step = 0; step < maxSteps; step++) {
    await f.runtime.idle();
    const status = await f.runtime.getStatus(instanceId);
    if (status && ["Completed", "Failed", "Terminated"].includes(status.runtimeStatus)) return status;
    f.clock.advance(stepMs);
  }
  throw new Error(`${instanceId} did not finish`);
}

/** Runs `test` on a database file of its own and a virtual clock, then removes the file. */
async function onFile(test: (path: string, clock: VirtualClock) => Promise<void>): Promise<void> {
  const { path, remove } = temporaryDatabasePath();
  try {
    await test(path, new VirtualClock(START));
  } finally {
    remove();
  }
}

const at = (ms: number) => new Date(new Date(START).getTime() + ms).toISOString();

function summary(events: readonly HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    switch (e.EventType) {
      case EventType.TaskScheduled:
        return [`scheduled ${e.EventId} ${String(e.Name)}`];
      case EventType.TaskCompleted:
        return [`completed ${String(e.TaskScheduledId)}`];
      case EventType.TaskFailed:
        return [`failed ${String(e.TaskScheduledId)}`];
      case EventType.TimerCreated:
        return [`timer ${e.EventId} at ${String(e.FireAt)}`];
      case EventType.TimerFired:
        return [`fired ${String(e.TimerId)}`];
      case EventType.SubOrchestrationInstanceCreated:
        return [`child ${e.EventId} ${String(e.Name)} as ${String(e.InstanceId)}`];
      case EventType.SubOrchestrationInstanceCompleted:
        return [`child completed ${String(e.TaskScheduledId)}`];
      case EventType.SubOrchestrationInstanceFailed:
        return [`child failed ${String(e.TaskScheduledId)}`];
      default:
        return [];
    }
  });
}

describe.each([
  ["full replays", false],
  ["replay sessions", true],
])("the local durable runtime's wider API, with %s", (_name, sessions) => {
  describe("callActivityWithRetry", () => {
    it("retries on the runtime's clock with backoff, each attempt and timer its own history events", async () => {
      const f = await open({ sessions });
      f.deps.failuresLeft.set("a", 3);
      await f.runtime.startNew(F.retry, { instanceId: "retry-a", input: "a" });
      await f.runtime.idle();
      expect(f.deps.calls).toEqual(["flaky(a)"]);
      // The first retry waits its interval: nothing runs a millisecond before.
      f.clock.advance(RETRY.firstMs - 1);
      await f.runtime.idle();
      expect(f.deps.calls).toHaveLength(1);
      const status = await runToEnd(f, "retry-a", 250);
      expect(status.runtimeStatus).toBe("Completed");
      expect(status.output).toEqual({ value: "ok a", attempts: 4 });
      // Intervals 1 s, 2 s, then 4 s capped at 3 s, each from the moment its failure was processed.
      const history = f.runtime.historyOf("retry-a");
      const intervals = history
        .filter((e) => e.EventType === EventType.TimerCreated)
        .map((e) => Date.parse(String(e.FireAt)) - Date.parse(e.Timestamp));
      expect(intervals).toEqual([1_000, 2_000, 3_000]);
      expect(summary(f.runtime.historyOf("retry-a")).filter((line) => !line.startsWith("timer"))).toEqual([
        "scheduled 0 flaky",
        "failed 0",
        "fired 1",
        "scheduled 2 flaky",
        "failed 2",
        "fired 3",
        "scheduled 4 flaky",
        "failed 4",
        "fired 5",
        "scheduled 6 flaky",
        "completed 6",
      ]);
    });

    it("after the last attempt waits one more interval, as the extension does, then throws the last error", async () => {
      const f = await open({ sessions });
      f.deps.failuresLeft.set("never", 100);
      await f.runtime.startNew(F.retryExhausted, { instanceId: "exhausted", input: "never" });
      const status = await runToEnd(f, "exhausted", 250);
      expect(f.deps.calls).toEqual(["flaky(never)", "flaky(never)", "flaky(never)"]);
      expect(status.output).toEqual({
        caught: expect.stringContaining("flaky never failed, 97 failure(s) left"),
      });
      const lines = summary(f.runtime.historyOf("exhausted"));
      expect(lines.filter((line) => line.startsWith("timer"))).toHaveLength(3);
      expect(lines.at(-1)).toBe("fired 5");
    });

    it("numbers a retry's timers and attempts where the SDK does, beside other tasks", async () => {
      const f = await open({ sessions });
      f.deps.failuresLeft.set("b", 1);
      await f.runtime.startNew(F.retryBeside, { instanceId: "beside", input: "b" });
      const status = await runToEnd(f, "beside", 250);
      expect(status.output).toEqual({
        flaky: { value: "ok b", attempts: 2 },
        echoed: "beside",
        after: "after",
      });
      // The retry's timer takes number 2 when its failure is processed, after the two tasks of Task.all;
      // the plain activity after them takes 4, not 2 as its place among the actions would say.
      expect(summary(f.runtime.historyOf("beside"))).toEqual([
        "scheduled 0 flaky",
        "scheduled 1 echo",
        "failed 0",
        "completed 1",
        `timer 2 at ${at(1_000)}`,
        "fired 2",
        "scheduled 3 flaky",
        "completed 3",
        "scheduled 4 echo",
        "completed 4",
      ]);
    });

    it("fails the instance, saying why, once the retry timeout has passed, instead of hanging it", async () => {
      const f = await open({ sessions });
      f.deps.failuresLeft.set("slow", 100);
      await f.runtime.startNew(F.retryTimeout, { instanceId: "timeout", input: "slow" });
      const status = await runToEnd(f, "timeout", 250);
      expect(status.runtimeStatus).toBe("Failed");
      expect(status.failure).toBe(
        "flaky failed 2 time(s) and its retry timeout (500 ms) has passed: the Durable Functions extension " +
          "would leave this orchestration waiting forever, so this runtime fails it",
      );
      expect(f.deps.calls).toEqual(["flaky(slow)", "flaky(slow)"]);
    });
  });

  describe("sub-orchestrations", () => {
    it("runs children with an explicit and a generated instance id and returns their output", async () => {
      const f = await open({ sessions });
      await f.runtime.startNew(F.parent, { instanceId: "p", input: "p" });
      const status = await f.runtime.waitForCompletion("p");
      const output = status.output as { named: { instanceId: string }; generated: { instanceId: string } };
      expect(output.named).toEqual({ echoed: "p-named", instanceId: "p-child", parent: "p" });
      expect(output.generated.instanceId).toMatch(/^[0-9a-f-]{36}:1$/);
      const lines = summary(f.runtime.historyOf("p"));
      expect(lines).toEqual([
        `child 0 ${F.child} as p-child`,
        "child completed 0",
        `child 1 ${F.child} as ${output.generated.instanceId}`,
        "child completed 1",
      ]);
      expect((await f.runtime.getStatus("p-child"))?.runtimeStatus).toBe("Completed");
      expect((await f.runtime.getStatus(output.generated.instanceId))?.output).toEqual(output.generated);
    });

    it("surfaces a child's failure in the parent as a catchable error naming the child and its reason", async () => {
      const f = await open({ sessions });
      await f.runtime.startNew(F.parentOfFailing, { instanceId: "pf" });
      const status = await f.runtime.waitForCompletion("pf");
      expect(status.runtimeStatus).toBe("Completed");
      expect(status.output).toEqual({
        caught: expect.stringMatching(
          new RegExp(
            `^SubOrchestrationFailed: sub-orchestration ${F.failingChild} \\(instance .+:0\\) failed: .*child gave up on boom`,
          ),
        ),
      });
    });

    it("retries a failing child as a new attempt after the interval", async () => {
      const f = await open({ sessions });
      f.deps.failuresLeft.set("c", 1);
      await f.runtime.startNew(F.parentRetryingChild, { instanceId: "pr", input: "c" });
      const status = await runToEnd(f, "pr", 250);
      expect(status.output).toEqual({ value: "ok c", attempts: 2 });
      const lines = summary(f.runtime.historyOf("pr"));
      expect(lines.map((line) => line.replace(/as \S+/, "as <id>"))).toEqual([
        `child 0 ${F.flakyChild} as <id>`,
        "child failed 0",
        `timer 1 at ${at(1_000)}`,
        "fired 1",
        `child 2 ${F.flakyChild} as <id>`,
        "child completed 2",
      ]);
    });

    it("fails the parent's task when an instance with the child's id is already running", async () => {
      let release = () => {};
      const deps = { calls: [], failuresLeft: new Map(), gate: new Promise<void>((r) => (release = r)) };
      const f = await open({ sessions, deps });
      await f.runtime.startNew(F.gatedChild, { instanceId: "x-gated", input: "first" });
      await f.runtime.startNew(F.parentOfGated, { instanceId: "x", input: "x" });
      const status = await f.runtime.waitForCompletion("x");
      expect(status.output).toEqual({
        caught: `InstanceAlreadyRunning: sub-orchestration ${F.gatedChild} was not started: instance x-gated is already running`,
      });
      release();
      expect((await f.runtime.waitForCompletion("x-gated")).output).toBe("first");
    });

    it("tells the parent when its child is terminated", async () => {
      const deps = { calls: [], failuresLeft: new Map(), gate: new Promise<void>(() => {}) };
      const f = await open({ sessions, deps });
      await f.runtime.startNew(F.parentOfGated, { instanceId: "t", input: "t" });
      await expect.poll(() => f.deps.calls).toEqual(["gated(t)"]);
      expect((await f.runtime.getStatus("t-gated"))?.runtimeStatus).toBe("Running");
      await f.runtime.terminate("t-gated", "operator stop");
      const status = await f.runtime.waitForCompletion("t");
      expect(status.output).toEqual({
        caught: `SubOrchestrationFailed: sub-orchestration ${F.gatedChild} (instance t-gated) was terminated: operator stop`,
      });
    });
  });

  describe("continueAsNew", () => {
    it("restarts the same instance with the new input and a fresh history", async () => {
      const f = await open({ sessions });
      await f.runtime.startNew(F.counter, { instanceId: "counter", input: { count: 0, until: 3 } });
      await f.runtime.idle();
      const first = await f.runtime.getStatus("counter");
      const status = await runToEnd(f, "counter", 60_000);
      expect(status.runtimeStatus).toBe("Completed");
      expect(status.output).toBe(3);
      expect(status.input).toEqual({ count: 2, until: 3 });
      expect(status.createdTime).toEqual(first?.createdTime);
      const history = f.runtime.historyOf("counter");
      expect(history.filter((e) => e.EventType === EventType.ExecutionStarted)).toHaveLength(1);
      expect(summary(history)).toEqual([`timer 0 at ${at(180_000)}`, "fired 0"]);
      expect(f.logger.events("durable.instance.continuedAsNew")).toHaveLength(2);
    });

    it("takes events raised to the instance id in whichever execution is current", async () => {
      const f = await open({ sessions });
      await f.runtime.startNew(F.adder, { instanceId: "adder" });
      for (const n of [1, 2, 3, 4]) {
        await f.runtime.idle();
        await f.runtime.raiseEvent("adder", "add", n);
      }
      const status = await f.runtime.waitForCompletion("adder");
      expect(status.output).toBe(10);
    });

    it("drops events delivered with the last episode that the orchestrator did not take, as the extension does", async () => {
      // The SDK's continueAsNew has no preserveUnprocessedEvents, and the extension's default discards them.
      const f = await open({ sessions });
      await f.runtime.startNew(F.adder, { instanceId: "adder-batch" });
      await f.runtime.idle();
      await f.runtime.raiseEvent("adder-batch", "add", 5);
      await f.runtime.raiseEvent("adder-batch", "add", 6);
      await f.runtime.idle();
      const status = await f.runtime.getStatus("adder-batch");
      expect(status).toMatchObject({ runtimeStatus: "Running", input: 5 });
      await f.runtime.raiseEvent("adder-batch", "add", 7);
      expect((await f.runtime.waitForCompletion("adder-batch")).output).toBe(12);
    });
  });
});

describe.each([
  ["full replays", false],
  ["replay sessions", true],
])("durable entities, with %s", (_name, sessions) => {
  const counter = (key: string) => ({ name: "Counter", key });

  it("answers an orchestration's calls and takes its signals, in the order they were sent", async () => {
    const f = await open({ sessions });
    await f.runtime.startNew(F.entityUser, { instanceId: "user", input: "a" });
    const status = await f.runtime.waitForCompletion("user");
    expect(status.output).toBe(7);
    expect(await f.runtime.readEntityState(counter("a"))).toEqual({ state: 7 });
    const sent = f.runtime.historyOf("user").filter((e) => e.EventType === EventType.EventSent);
    expect(sent.map((e) => [e.EventId, e.InstanceId, JSON.parse(String(e.Input)).operation])).toEqual([
      [0, "@counter@a", "add"],
      [1, "@counter@a", "add"],
      [2, "@counter@a", "get"],
    ]);
  });

  it("runs operations on one entity one at a time: twenty callers, no update lost", async () => {
    const f = await open({ sessions });
    for (let i = 0; i < 20; i++) await f.runtime.startNew(F.entityAdder, { instanceId: `adder-${i}` });
    for (let i = 0; i < 20; i++)
      expect((await f.runtime.waitForCompletion(`adder-${i}`)).output).toBe("added");
    expect(await f.runtime.readEntityState(counter("shared"))).toEqual({ state: 20 });
  });

  it("never overlaps two batches of one entity, however the operations arrive", async () => {
    let release = () => {};
    const inFlight = { now: 0, most: 0 };
    const gate = new Promise<void>((resolve) => (release = resolve));
    const f = await open({ sessions, deps: { calls: [], failuresLeft: new Map(), gate, inFlight } });
    // The first batch blocks on the gate while later operations arrive, each in a round of its own.
    await f.runtime.startNew(F.slowCaller, { instanceId: "slow-0", input: "one" });
    await expect.poll(() => f.deps.calls.length).toBe(1);
    for (let i = 1; i < 5; i++) {
      await f.runtime.startNew(F.slowCaller, { instanceId: `slow-${i}`, input: "one" });
      await f.runtime.signalEntity({ name: "SlowCounter", key: "one" }, "add", 10);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(inFlight.most).toBe(1);
    release();
    for (let i = 0; i < 5; i++)
      expect((await f.runtime.waitForCompletion(`slow-${i}`)).output).toBe("called");
    await f.runtime.idle();
    expect(inFlight.most).toBe(1);
    expect(await f.runtime.readEntityState({ name: "SlowCounter", key: "one" })).toEqual({ state: 45 });
    expect(f.logger.events("durable.entity.batch.completed").length).toBeGreaterThan(1);
  });

  it("sends the signals of the episode that continues as new, as the extension does", async () => {
    const f = await open({ sessions });
    await f.runtime.startNew(F.ticker, { instanceId: "ticker", input: 3 });
    const status = await runToEnd(f, "ticker", 1_000);
    expect(status.output).toBe(1);
    await f.runtime.idle();
    expect(await f.runtime.readEntityState(counter("ticks"))).toEqual({ state: 3 });
  });

  it("tries a batch again when it could not be written, rather than strand its callers", async () => {
    const f = await open({ sessions });
    const store = (f.runtime as unknown as { store: { commitEntityBatch: (...args: unknown[]) => unknown } })
      .store;
    const commit = store.commitEntityBatch.bind(store);
    let failures = 1;
    store.commitEntityBatch = (...args: unknown[]) => {
      if (failures-- > 0) throw new Error("database is locked");
      return commit(...args);
    };
    await f.runtime.startNew(F.entityUser, { instanceId: "retried", input: "r" });
    expect((await f.runtime.waitForCompletion("retried", 10_000)).output).toBe(7);
    expect(f.logger.events("durable.entity.batch.failed")).toHaveLength(1);
  });

  it("takes a client's signals, deletes an entity that destructs, and forwards signals between entities", async () => {
    const f = await open({ sessions });
    await f.runtime.signalEntity(counter("b"), "add", 3);
    await f.runtime.signalEntity(counter("b"), "forward");
    await f.runtime.idle();
    expect(await f.runtime.readEntityState(counter("b"))).toEqual({ state: 3 });
    expect(await f.runtime.readEntityState(counter("b-copy"))).toEqual({ state: 3 });
    await f.runtime.signalEntity(counter("b"), "reset");
    await f.runtime.idle();
    expect(await f.runtime.readEntityState(counter("b"))).toBeUndefined();
  });

  it("answers a call to an entity no function serves with an error saying so", async () => {
    const f = await open({ sessions });
    await f.runtime.startNew(F.entityUnknown, { instanceId: "entity-unknown" });
    const status = await f.runtime.waitForCompletion("entity-unknown");
    expect(status.output).toEqual({ caught: "no entity named nobody is registered" });
    expect(await f.runtime.readEntityState({ name: "Nobody", key: "x" })).toBeUndefined();
  });

  it("surfaces an operation that throws in the calling orchestration as a catchable error", async () => {
    const f = await open({ sessions });
    await f.runtime.startNew(F.entityFailure, { instanceId: "entity-failure" });
    const status = await f.runtime.waitForCompletion("entity-failure");
    expect(status.runtimeStatus).toBe("Completed");
    expect(status.output).toEqual({ caught: expect.any(String) });
    expect(f.logger.events("durable.entity.operation.failed")).toHaveLength(1);
  });
});

describe("long timers", () => {
  it("waits past the SDK's six-day maximum as a chain of three-day timers, waking at the deadline", async () => {
    const f = await open();
    await f.runtime.startNew(F.longTimer, { instanceId: "long" });
    const status = await runToEnd(f, "long", 86_400_000);
    expect(status.output).toBe(at(10 * 86_400_000));
    const timers = summary(f.runtime.historyOf("long")).filter((line) => line.startsWith("timer"));
    expect(timers).toEqual([
      `timer 0 at ${at(3 * 86_400_000)}`,
      `timer 1 at ${at(6 * 86_400_000)}`,
      `timer 2 at ${at(10 * 86_400_000)}`,
    ]);
  });
});

describe.each([
  ["full replays", false],
  ["replay sessions", true],
])("crash and resume in the middle of the wider API, with %s", (_name, sessions) => {
  it("resumes a retry waiting on its timer and finishes it on another runtime", async () => {
    await onFile(async (path, clock) => {
      const deps: FeatureAppDeps = { calls: [], failuresLeft: new Map([["r", 1]]) };
      const first = await open({ path, clock, deps, sessions });
      await first.runtime.startNew(F.retry, { instanceId: "crash-retry", input: "r" });
      await first.runtime.idle();
      expect(deps.calls).toEqual(["flaky(r)"]);
      first.runtime.halt();
      const second = await open({ path, clock, deps, sessions });
      const status = await runToEnd(second, "crash-retry", 250);
      expect(status.output).toEqual({ value: "ok r", attempts: 2 });
      expect(deps.calls).toEqual(["flaky(r)", "flaky(r)"]);
    });
  });

  it("resumes a parent whose child was mid-activity when the process died", async () => {
    await onFile(async (path, clock) => {
      const stuck: FeatureAppDeps = { calls: [], failuresLeft: new Map(), gate: new Promise<void>(() => {}) };
      const first = await open({ path, clock, deps: stuck, sessions });
      await first.runtime.startNew(F.parentOfGated, { instanceId: "crash-parent", input: "v" });
      await expect.poll(() => stuck.calls).toEqual(["gated(v)"]);
      first.runtime.halt();
      const deps: FeatureAppDeps = { calls: [], failuresLeft: new Map() };
      const second = await open({ path, clock, deps, sessions });
      const status = await second.runtime.waitForCompletion("crash-parent");
      expect(status.output).toBe("v");
      expect(deps.calls).toEqual(["gated(v)"]);
    });
  });

  it("runs an entity's operations queued before the process died, and keeps its state across restarts", async () => {
    await onFile(async (path, clock) => {
      const first = await open({ path, clock, sessions });
      await first.runtime.signalEntity({ name: "Counter", key: "kept" }, "add", 4);
      await first.runtime.idle();
      await first.runtime.signalEntity({ name: "Counter", key: "kept" }, "add", 6);
      first.runtime.halt(); // before the second signal's batch could run
      const second = await open({ path, clock, sessions });
      await second.runtime.idle();
      expect(await second.runtime.readEntityState({ name: "Counter", key: "kept" })).toEqual({ state: 10 });
      second.runtime.halt();
      const third = await open({ path, clock, sessions });
      expect(await third.runtime.readEntityState({ name: "Counter", key: "kept" })).toEqual({ state: 10 });
    });
  });

  it("runs again an entity operation the process died in the middle of, and applies it once", async () => {
    await onFile(async (path, clock) => {
      const stuck: FeatureAppDeps = { calls: [], failuresLeft: new Map(), gate: new Promise<void>(() => {}) };
      const first = await open({ path, clock, deps: stuck, sessions });
      await first.runtime.signalEntity({ name: "SlowCounter", key: "k" }, "add", 5);
      await expect.poll(() => stuck.calls).toEqual(["slowAdd(k)"]);
      first.runtime.halt();
      const deps: FeatureAppDeps = { calls: [], failuresLeft: new Map() };
      const second = await open({ path, clock, deps, sessions });
      await second.runtime.idle();
      expect(deps.calls).toEqual(["slowAdd(k)"]);
      expect(await second.runtime.readEntityState({ name: "SlowCounter", key: "k" })).toEqual({ state: 5 });
    });
  });

  it("finishes an orchestration that was waiting on an entity call when the process died", async () => {
    await onFile(async (path, clock) => {
      const stuck: FeatureAppDeps = { calls: [], failuresLeft: new Map(), gate: new Promise<void>(() => {}) };
      const first = await open({ path, clock, deps: stuck, sessions });
      await first.runtime.startNew(F.slowCaller, { instanceId: "crash-caller", input: "c" });
      await expect.poll(() => stuck.calls).toEqual(["slowAdd(c)"]);
      first.runtime.halt();
      const second = await open({ path, clock, sessions });
      const status = await second.runtime.waitForCompletion("crash-caller");
      expect(status).toMatchObject({ runtimeStatus: "Completed", output: "called" });
      expect(await second.runtime.readEntityState({ name: "SlowCounter", key: "c" })).toEqual({ state: 1 });
    });
  });

  it("resumes an instance that continued as new just before the process died", async () => {
    await onFile(async (path, clock) => {
      const first = await open({ path, clock, sessions });
      await first.runtime.startNew(F.counter, { instanceId: "crash-counter", input: { count: 0, until: 2 } });
      await first.runtime.idle();
      clock.advance(60_000);
      await expect
        .poll(async () => (await first.runtime.getStatus("crash-counter"))?.input)
        .toEqual({
          count: 1,
          until: 2,
        });
      first.runtime.halt();
      const second = await open({ path, clock, sessions });
      const status = await runToEnd(second, "crash-counter", 60_000);
      expect(status.output).toBe(2);
    });
  });
});
