import type * as df from "durable-functions";
import { captureRegistrations, type FunctionRegistry } from "../../laptop/worker/registration-capture.js";
import { FEATURES, type FeatureAppDeps, registerFeatureApp } from "../support/durable-feature-app.js";

/** One orchestration run on both engines: what it is started with, and what the test does meanwhile. */
export interface DifferentialCase {
  readonly name: string;
  readonly orchestration: string;
  readonly instanceId: string;
  readonly input: unknown;
  /** Failures `flaky` has in store for a key, before the case starts. */
  readonly failures?: Readonly<Record<string, number>>;
  /** What the client does once the instance runs (raise events). */
  readonly drive?: (client: df.DurableClient, instanceId: string) => Promise<void>;
}

/** The feature app's orchestrations that finish in seconds of real time, each on keys of its own. */
export const CASES: readonly DifferentialCase[] = [
  {
    name: "retry until an attempt succeeds",
    orchestration: FEATURES.retry,
    instanceId: "retry",
    input: "r1",
    failures: { r1: 2 },
  },
  {
    name: "retries exhausted, the last error caught",
    orchestration: FEATURES.retryExhausted,
    instanceId: "retry-exhausted",
    input: "x1",
    failures: { x1: 10 },
  },
  {
    name: "a retrying task beside a plain activity",
    orchestration: FEATURES.retryBeside,
    instanceId: "retry-beside",
    input: "b1",
    failures: { b1: 1 },
  },
  {
    name: "children with a given and a generated id",
    orchestration: FEATURES.parent,
    instanceId: "parent",
    input: "p1",
  },
  {
    name: "a failing child caught by its parent",
    orchestration: FEATURES.parentOfFailing,
    instanceId: "parent-of-failing",
    input: null,
  },
  {
    name: "a failing child retried",
    orchestration: FEATURES.parentRetryingChild,
    instanceId: "parent-retrying",
    input: "c1",
    failures: { c1: 1 },
  },
  {
    name: "an entity called and signalled",
    orchestration: FEATURES.entityUser,
    instanceId: "entity-user",
    input: "e1",
  },
  {
    name: "an entity operation that throws",
    orchestration: FEATURES.entityFailure,
    instanceId: "entity-failure",
    input: null,
  },
  {
    name: "continue-as-new with a timer and a signal",
    orchestration: FEATURES.ticker,
    instanceId: "ticker",
    input: 2,
  },
  {
    name: "events across continue-as-new",
    orchestration: FEATURES.adder,
    instanceId: "adder",
    input: 0,
    drive: async (client, instanceId) => {
      for (const value of [4, 6]) {
        await untilWaiting(client, instanceId);
        await client.raiseEvent(instanceId, "add", value);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      }
    },
  },
];

async function untilWaiting(client: df.DurableClient, instanceId: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const status = await client.getStatus(instanceId).catch(() => undefined);
    if (status?.runtimeStatus === "Running") return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The feature app with deps of its own: each engine gets one, so their activities' counts stay apart;
 * `alsoRegister` adds another app's registrations to the same registry (one engine serves both).
 */
export async function featureApp(
  alsoRegister: () => void = () => {},
): Promise<{ registry: FunctionRegistry; deps: FeatureAppDeps }> {
  const deps: FeatureAppDeps = { calls: [], failuresLeft: new Map() };
  for (const test of CASES)
    for (const [key, count] of Object.entries(test.failures ?? {})) deps.failuresLeft.set(key, count);
  const registry = await captureRegistrations(() => {
    registerFeatureApp(deps);
    alsoRegister();
  });
  return { registry, deps };
}

const FINISHED = ["Completed", "Failed", "Terminated"];

/** Starts every case, drives them, and returns each one's final status and output, ids made comparable. */
export async function runCases(client: df.DurableClient, timeoutMs: number) {
  for (const test of CASES)
    await client.startNew(test.orchestration, { instanceId: test.instanceId, input: test.input });
  await Promise.all(CASES.map((test) => test.drive?.(client, test.instanceId)));
  const deadline = Date.now() + timeoutMs;
  const results: Record<string, { runtimeStatus: string; output: unknown }> = {};
  for (const test of CASES) {
    for (;;) {
      const status = await client.getStatus(test.instanceId);
      if (FINISHED.includes(String(status.runtimeStatus)) || Date.now() > deadline) {
        results[test.name] = {
          runtimeStatus: String(status.runtimeStatus),
          output: comparable(status.output),
        };
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return results;
}

/** Generated ids (an execution's GUID, with or without dashes) replaced, so two engines' outputs compare. */
export function comparable(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value ?? null).replace(
      /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/gi,
      "<guid>",
    ),
  );
}
