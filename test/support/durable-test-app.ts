import type { OrchestrationContext } from "durable-functions";
import * as df from "durable-functions";

/** What the test app's activities do, so each test can make them block, fail or count. */
export interface TestAppDeps {
  readonly calls: string[];
  /** Awaited by `blockingDouble` before it answers; a test resolves it when it wants. */
  gate?: Promise<void>;
}

export interface RaceInput {
  readonly step: string;
  readonly timeoutMs: number;
}

export const TEST_ORCHESTRATIONS = {
  sequence: "testSequence",
  race: "testRace",
  raceTwice: "testRaceTwice",
  catcher: "testCatcher",
  fanOut: "testFanOut",
  lateWaiter: "testLateWaiter",
  evolving: "testEvolving",
  blockingSequence: "testBlockingSequence",
  clockReader: "testClockReader",
  unhandled: "testUnhandled",
  entityLocker: "testEntityLocker",
  voidActivity: "testVoidActivity",
} as const;

/**
 * A small Durable Functions app registered exactly as an Azure app registers itself, with
 * `df.app.orchestration` and `df.app.activity`: the local runtime's tests run these registrations.
 */
export function registerTestApp(deps: TestAppDeps, variant: "v1" | "v2" = "v1"): void {
  df.app.activity("double", {
    handler: (n: number) => {
      deps.calls.push(`double(${n})`);
      return n * 2;
    },
  });
  df.app.activity("blockingDouble", {
    handler: async (n: number) => {
      deps.calls.push(`blockingDouble(${n})`);
      await deps.gate;
      return n * 2;
    },
  });
  df.app.activity("send", {
    handler: (step: string) => {
      deps.calls.push(`send(${step})`);
      return `sent ${step}`;
    },
  });
  df.app.activity("nothing", {
    handler: () => {
      deps.calls.push("nothing()");
    },
  });
  df.app.activity("explode", {
    handler: (reason: string) => {
      deps.calls.push(`explode(${reason})`);
      throw new Error(`partner refused: ${reason}`);
    },
  });

  df.app.entity("tally", (context) => {
    const count = context.df.getState(() => 0) as number;
    if (context.df.operationName === "add") context.df.setState(count + (context.df.getInput() as number));
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.sequence, function* (context: OrchestrationContext) {
    let value = context.df.getInput() as number;
    for (let i = 0; i < 5; i++) value = yield context.df.callActivity("double", value);
    return value;
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.blockingSequence, function* (context: OrchestrationContext) {
    const first = yield context.df.callActivity("blockingDouble", context.df.getInput() as number);
    return yield context.df.callActivity("double", first);
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.race, function* (context: OrchestrationContext) {
    const input = context.df.getInput() as RaceInput;
    yield context.df.callActivity("send", input.step);
    const deadline = new Date(context.df.currentUtcDateTime.getTime() + input.timeoutMs);
    const timer = context.df.createTimer(deadline);
    const reply = context.df.waitForExternalEvent(`reply-${input.step}`);
    const winner = yield context.df.Task.any([reply, timer]);
    if (winner === reply) {
      timer.cancel();
      return { outcome: "reply", value: reply.result };
    }
    return { outcome: "timeout", at: context.df.currentUtcDateTime.toISOString() };
  });

  // Two replies in turn, each raced against its own timer: the first timer is cancelled in a later
  // episode than the one that armed it, while the instance goes on running.
  df.app.orchestration(TEST_ORCHESTRATIONS.raceTwice, function* (context: OrchestrationContext) {
    const timeoutMs = context.df.getInput() as number;
    const outcomes: string[] = [];
    for (const name of ["first", "second"]) {
      const timer = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + timeoutMs));
      const reply = context.df.waitForExternalEvent(name);
      const winner = yield context.df.Task.any([reply, timer]);
      if (winner === reply) timer.cancel();
      outcomes.push(winner === reply ? `${name}: reply` : `${name}: timeout`);
    }
    return outcomes;
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.catcher, function* (context: OrchestrationContext) {
    try {
      yield context.df.callActivity("explode", "out of stock");
      return "not reached";
    } catch (error) {
      return { caught: (error as Error).message };
    }
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.unhandled, function* (context: OrchestrationContext) {
    yield context.df.callActivity("explode", "card declined");
    return "not reached";
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.voidActivity, function* (context: OrchestrationContext) {
    const result: unknown = yield context.df.callActivity("nothing");
    return { result: result ?? "nothing came back" };
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.entityLocker, function* (context: OrchestrationContext) {
    yield context.df.lock([new df.EntityId("counter", "one")]);
    return "locked";
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.fanOut, function* (context: OrchestrationContext) {
    const count = context.df.getInput() as number;
    const tasks = Array.from({ length: count }, (_, i) => context.df.callActivity("double", i));
    const results = (yield context.df.Task.all(tasks)) as number[];
    return results.reduce((a, b) => a + b, 0);
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.lateWaiter, function* (context: OrchestrationContext) {
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60_000));
    const early = yield context.df.waitForExternalEvent("early");
    return { early };
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.evolving, function* (context: OrchestrationContext) {
    const first = variant === "v1" ? "double" : "send";
    yield context.df.callActivity(first, variant === "v1" ? 1 : "x");
    yield context.df.waitForExternalEvent("continue");
    return variant;
  });

  df.app.orchestration(TEST_ORCHESTRATIONS.clockReader, function* (context: OrchestrationContext) {
    // Breaks the rule on purpose: the wall clock and random numbers differ on every replay.
    // The offset stays under the SDK's six days, so the timer is one timer and not a chain of shorter ones.
    const offset = (Date.now() % 100_000) + Math.floor(Math.random() * 1_000_000);
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 1_000 + offset));
    yield context.df.waitForExternalEvent("continue");
    return "done";
  });
}
