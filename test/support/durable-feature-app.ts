import type { OrchestrationContext } from "durable-functions";
import * as df from "durable-functions";

/**
 * A Durable Functions app that uses the parts of the API beyond activities, timers and events:
 * retries, sub-orchestrations, continue-as-new and durable entities, written as the official samples
 * write them. The local durable runtime's feature tests run it; what each orchestration returns is
 * documented beside it, and the tests hold the runtime to that.
 */
export interface FeatureAppDeps {
  readonly calls: string[];
  /** How many more times `flaky` fails for a key before it succeeds. */
  readonly failuresLeft: Map<string, number>;
  /** Awaited by `gated` before it answers. */
  gate?: Promise<void>;
  /** Operations of `SlowCounter` under way at once, per key, and the most there ever were. */
  readonly inFlight?: { now: number; most: number };
}

export const FEATURES = {
  /** `flaky` with retries: `{ value, attempts }` once an attempt succeeds. */
  retry: "featureRetry",
  /** `flaky` failing every time: catches the error and returns `{ caught }`. */
  retryExhausted: "featureRetryExhausted",
  /** A retry timeout shorter than the first interval: the second failure comes after it. */
  retryTimeout: "featureRetryTimeout",
  /** A retrying task and a plain activity at once, then another activity: numbering across retries. */
  retryBeside: "featureRetryBeside",
  /** Two children, one with an explicit instance id, one without: `{ named, generated }`. */
  parent: "featureParent",
  child: "featureChild",
  /** A child that fails: the parent catches it and returns `{ caught }`. */
  parentOfFailing: "featureParentOfFailing",
  failingChild: "featureFailingChild",
  /** A child that waits on `gated`, called with an explicit id: the caller's input. */
  parentOfGated: "featureParentOfGated",
  gatedChild: "featureGatedChild",
  /** A child that fails until `flaky` succeeds, called with retries. */
  parentRetryingChild: "featureParentRetryingChild",
  flakyChild: "featureFlakyChild",
  /** Waits a minute, then continues as new with `count + 1` until it reaches `until`; returns the count. */
  counter: "featureCounter",
  /** Waits for an `add` event, then continues as new with the sum until it reaches 10; returns the sum. */
  adder: "featureAdder",
  /** A ten-day timer (longer than the SDK's six-day maximum): returns the time it woke at. */
  longTimer: "featureLongTimer",
  /** Calls `counter` (its key the input) to add 5, signals it to add 2, then calls `get`: returns 7 on a new key. */
  entityUser: "featureEntityUser",
  /** Calls `counter`'s `fail`: returns `{ caught }`. */
  entityFailure: "featureEntityFailure",
  /** Signals `Counter` (key `ticks`) to add 1, then continues as new, `input` times in all. */
  ticker: "featureTicker",
  /** Calls `SlowCounter` (its key the input) to add 1 and returns the call's answer. */
  slowCaller: "featureSlowCaller",
  /** Calls an entity no function serves: returns `{ caught }`. */
  entityUnknown: "featureEntityUnknown",
  /** Calls `counter` (key `shared`) to add 1. */
  entityAdder: "featureEntityAdder",
} as const;

export const RETRY = { firstMs: 1_000, coefficient: 2, maxIntervalMs: 3_000 } as const;

function retryOptions(maxAttempts: number): df.RetryOptions {
  const options = new df.RetryOptions(RETRY.firstMs, maxAttempts);
  options.backoffCoefficient = RETRY.coefficient;
  options.maxRetryIntervalInMilliseconds = RETRY.maxIntervalMs;
  return options;
}

export function registerFeatureApp(deps: FeatureAppDeps): void {
  df.app.activity("flaky", {
    handler: (key: string) => {
      deps.calls.push(`flaky(${key})`);
      const left = deps.failuresLeft.get(key) ?? 0;
      if (left > 0) {
        deps.failuresLeft.set(key, left - 1);
        throw new Error(`flaky ${key} failed, ${left - 1} failure(s) left`);
      }
      return { value: `ok ${key}`, attempts: deps.calls.filter((call) => call === `flaky(${key})`).length };
    },
  });
  df.app.activity("echo", {
    handler: (value: string) => {
      deps.calls.push(`echo(${value})`);
      return value;
    },
  });
  df.app.activity("gated", {
    handler: async (value: string) => {
      deps.calls.push(`gated(${value})`);
      await deps.gate;
      return value;
    },
  });

  df.app.orchestration(FEATURES.retry, function* (context: OrchestrationContext) {
    const key = context.df.getInput() as string;
    return yield context.df.callActivityWithRetry("flaky", retryOptions(5), key);
  });

  df.app.orchestration(FEATURES.retryExhausted, function* (context: OrchestrationContext) {
    try {
      yield context.df.callActivityWithRetry("flaky", retryOptions(3), context.df.getInput() as string);
      return "not reached";
    } catch (error) {
      return { caught: (error as Error).message };
    }
  });

  df.app.orchestration(FEATURES.retryTimeout, function* (context: OrchestrationContext) {
    const options = retryOptions(5);
    options.retryTimeoutInMilliseconds = 500;
    return yield context.df.callActivityWithRetry("flaky", options, context.df.getInput() as string);
  });

  df.app.orchestration(FEATURES.retryBeside, function* (context: OrchestrationContext) {
    const key = context.df.getInput() as string;
    const [flaky, echoed] = (yield context.df.Task.all([
      context.df.callActivityWithRetry("flaky", retryOptions(5), key),
      context.df.callActivity("echo", "beside"),
    ])) as [unknown, string];
    const after = yield context.df.callActivity("echo", "after");
    return { flaky, echoed, after };
  });

  df.app.orchestration(FEATURES.parent, function* (context: OrchestrationContext) {
    const input = context.df.getInput() as string;
    const named = yield context.df.callSubOrchestrator(FEATURES.child, `${input}-named`, `${input}-child`);
    const generated = yield context.df.callSubOrchestrator(FEATURES.child, `${input}-generated`);
    return { named, generated };
  });

  df.app.orchestration(FEATURES.child, function* (context: OrchestrationContext) {
    const echoed = yield context.df.callActivity("echo", context.df.getInput() as string);
    return { echoed, instanceId: context.df.instanceId, parent: context.df.parentInstanceId };
  });

  df.app.orchestration(FEATURES.parentOfFailing, function* (context: OrchestrationContext) {
    try {
      yield context.df.callSubOrchestrator(FEATURES.failingChild, "boom");
      return "not reached";
    } catch (error) {
      return { caught: (error as Error).message };
    }
  });

  df.app.orchestration(FEATURES.failingChild, function* (context: OrchestrationContext) {
    yield context.df.callActivity("echo", "before failing");
    throw new Error(`child gave up on ${context.df.getInput() as string}`);
  });

  df.app.orchestration(FEATURES.parentOfGated, function* (context: OrchestrationContext) {
    const input = context.df.getInput() as string;
    try {
      return yield context.df.callSubOrchestrator(FEATURES.gatedChild, input, `${input}-gated`);
    } catch (error) {
      return { caught: (error as Error).message };
    }
  });

  df.app.orchestration(FEATURES.gatedChild, function* (context: OrchestrationContext) {
    return yield context.df.callActivity("gated", context.df.getInput() as string);
  });

  df.app.orchestration(FEATURES.parentRetryingChild, function* (context: OrchestrationContext) {
    const key = context.df.getInput() as string;
    return yield context.df.callSubOrchestratorWithRetry(FEATURES.flakyChild, retryOptions(3), key);
  });

  df.app.orchestration(FEATURES.flakyChild, function* (context: OrchestrationContext) {
    // One attempt of the activity: a failure fails this child, and the parent's retry starts another.
    return yield context.df.callActivity("flaky", context.df.getInput() as string);
  });

  df.app.orchestration(FEATURES.counter, function* (context: OrchestrationContext) {
    const { count, until } = context.df.getInput() as { count: number; until: number };
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60_000));
    if (count + 1 < until) {
      context.df.continueAsNew({ count: count + 1, until });
      return undefined;
    }
    return count + 1;
  });

  /**
   * A counter: `add` (its input), `get` (returns the count), `reset` (deletes the entity), `fail`
   * (throws), `forward` (signals the entity `<key>-copy` to add the count).
   */
  df.app.entity("Counter", (context) => {
    const count = context.df.getState(() => 0) as number;
    switch (context.df.operationName) {
      case "add":
        context.df.setState(count + (context.df.getInput() as number));
        return;
      case "get":
        context.df.return(count);
        return;
      case "reset":
        context.df.destructOnExit();
        return;
      case "fail":
        throw new Error("the counter refuses");
      case "forward":
        context.df.signalEntity(new df.EntityId("Counter", `${context.df.entityKey}-copy`), "add", count);
        return;
    }
  });

  /** A counter whose `add` waits on `gate` first (records `slowAdd(<key>)` when it starts). */
  df.app.entity("SlowCounter", async (context) => {
    const count = context.df.getState(() => 0) as number;
    deps.calls.push(`slowAdd(${context.df.entityKey})`);
    if (deps.inFlight) {
      deps.inFlight.now++;
      deps.inFlight.most = Math.max(deps.inFlight.most, deps.inFlight.now);
    }
    await deps.gate;
    if (deps.inFlight) deps.inFlight.now--;
    context.df.setState(count + (context.df.getInput() as number));
  });

  df.app.orchestration(FEATURES.entityUser, function* (context: OrchestrationContext) {
    const counter = new df.EntityId("Counter", context.df.getInput() as string);
    yield context.df.callEntity(counter, "add", 5);
    context.df.signalEntity(counter, "add", 2);
    return yield context.df.callEntity(counter, "get");
  });

  df.app.orchestration(FEATURES.entityFailure, function* (context: OrchestrationContext) {
    try {
      yield context.df.callEntity(new df.EntityId("Counter", "failing"), "fail");
      return "not reached";
    } catch (error) {
      return { caught: String((error as Error).message) };
    }
  });

  df.app.orchestration(FEATURES.ticker, function* (context: OrchestrationContext) {
    const left = context.df.getInput() as number;
    context.df.signalEntity(new df.EntityId("Counter", "ticks"), "add", 1);
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 1_000));
    if (left > 1) context.df.continueAsNew(left - 1);
    return left;
  });

  df.app.orchestration(FEATURES.slowCaller, function* (context: OrchestrationContext) {
    yield context.df.callEntity(new df.EntityId("SlowCounter", context.df.getInput() as string), "add", 1);
    return "called";
  });

  df.app.orchestration(FEATURES.entityUnknown, function* (context: OrchestrationContext) {
    try {
      yield context.df.callEntity(new df.EntityId("Nobody", "x"), "add", 1);
      return "not reached";
    } catch (error) {
      return { caught: String((error as Error).message) };
    }
  });

  df.app.orchestration(FEATURES.entityAdder, function* (context: OrchestrationContext) {
    yield context.df.callEntity(new df.EntityId("Counter", "shared"), "add", 1);
    return "added";
  });

  df.app.orchestration(FEATURES.longTimer, function* (context: OrchestrationContext) {
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 10 * 86_400_000));
    return context.df.currentUtcDateTime.toISOString();
  });

  df.app.orchestration(FEATURES.adder, function* (context: OrchestrationContext) {
    const sum = (context.df.getInput() as number | undefined) ?? 0;
    const added = (yield context.df.waitForExternalEvent("add")) as number;
    if (sum + added < 10) {
      context.df.continueAsNew(sum + added);
      return undefined;
    }
    return sum + added;
  });
}
