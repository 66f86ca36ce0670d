/**
 * The local durable runtime against Microsoft's extension: the feature app's orchestrations that finish
 * in seconds (retries, sub-orchestrations, entities, continue-as-new, events) run on both, in real time,
 * and each ends with the same status and output, generated ids aside, except where the table below
 * says how and why they differ (docs/local-durable-runtime.md says it too). The app's order scenarios
 * (order-scenarios.ts) run on both at the same time, in the same engines. Needs the .NET SDK 8 or
 * later: skipped without it, saying so, except under CI (CI=true), where it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findDotnetSdk } from "../../laptop/extension-host/dotnet-sdk.js";
import type { FunctionRegistry } from "../../laptop/worker/registration-capture.js";
import { CASES, featureApp, runCases } from "./differential-cases.js";
import { ORDER_SCENARIOS, OrderApp, runOrderScenarios } from "./order-scenarios.js";
import { type EngineUnderTest, startExtensionEngine, startLocalEngine } from "./two-engines.js";

const sdk = findDotnetSdk();
if (!sdk.found) {
  const reason = `no .NET SDK 8 or later (${sdk.why})`;
  if (process.env.CI === "true") throw new Error(`${reason}; CI runs the differential check and needs one`);
  console.warn(`test/extension-host: the differential check is skipped: ${reason}`);
}
const describeWithDotnet = sdk.found ? describe : describe.skip;

type Results = Awaited<ReturnType<typeof runCases>>;
type OrderResults = Awaited<ReturnType<typeof runOrderScenarios>>;

/**
 * Where the engines differ, and how: the message of a failed activity or sub-orchestration as the
 * orchestration catches it. The extension's carries the function's name and the failure's details
 * (the exception as .NET serialized it, or its stack); the local runtime's is the error's own.
 */
const DIFFERENCES: Readonly<Record<string, { local: RegExp; extension: RegExp }>> = {
  "retries exhausted, the last error caught": {
    local: /^Error: flaky x1 failed, 7 failure\(s\) left$/,
    extension:
      /^Activity function 'flaky' failed: {2}flaky x1 failed, 7 failure\(s\) left \n \{"\$type":"System\.Exception/,
  },
  "a failing child caught by its parent": {
    local:
      /^SubOrchestrationFailed: sub-orchestration featureFailingChild \(instance <guid>:0\) failed: child gave up on boom$/,
    extension:
      /^Orchestrator function 'featureFailingChild' failed: child gave up on boom \n Message: child gave up on boom, StackTrace: /,
  },
};

let engines: EngineUnderTest[] = [];
let orderApps: OrderApp[] = [];
let local: Results;
let extension: Results;
let localOrders: OrderResults;
let extensionOrders: OrderResults;

/** The API cases and the order scenarios on one engine, at once. */
async function runAll(engine: EngineUnderTest, orders: OrderApp, registry: FunctionRegistry) {
  return Promise.all([
    runCases(engine.client, 120_000),
    runOrderScenarios(orders, registry, engine, 180_000),
  ]);
}

beforeAll(async () => {
  if (!sdk.found) return;
  orderApps = [new OrderApp(), new OrderApp()];
  // One at a time: registrations are captured from one app at once.
  const localApp = await featureApp(() => orderApps[0]?.registerFunctions());
  const extensionApp = await featureApp(() => orderApps[1]?.registerFunctions());
  engines = await Promise.all([
    startLocalEngine(localApp.registry),
    startExtensionEngine(extensionApp.registry, "DifferentialHub"),
  ]);
  const [onLocal, onExtension] = await Promise.all([
    runAll(engines[0] as EngineUnderTest, orderApps[0] as OrderApp, localApp.registry),
    runAll(engines[1] as EngineUnderTest, orderApps[1] as OrderApp, extensionApp.registry),
  ]);
  [local, localOrders] = onLocal;
  [extension, extensionOrders] = onExtension;
}, 480_000);
afterAll(async () => {
  for (const engine of engines) await engine.close();
  for (const orders of orderApps) orders.close();
});

describeWithDotnet("the local durable runtime against Microsoft's extension", () => {
  it.each(CASES.filter((test) => !DIFFERENCES[test.name]).map((test) => test.name))(
    "%s: the same status and output",
    (name) => {
      expect(extension[name]?.runtimeStatus).toBe("Completed");
      expect(local[name]).toEqual(extension[name]);
    },
  );

  it.each(Object.keys(DIFFERENCES))("%s: the documented difference, and only that", (name) => {
    const expected = DIFFERENCES[name];
    const caught = (results: Results) => String((results[name]?.output as { caught?: unknown })?.caught);
    expect(local[name]?.runtimeStatus).toBe("Completed");
    expect(extension[name]?.runtimeStatus).toBe("Completed");
    expect(caught(local)).toMatch(expected?.local ?? /^$/);
    expect(caught(extension)).toMatch(expected?.extension ?? /^$/);
  });

  it.each(ORDER_SCENARIOS.map((scenario) => [scenario.name, scenario]))(
    "F23-6: %s: the same record, Agent calls, attempts, outputs and decisions on both",
    (name, scenario) => {
      const outcomes = (results: OrderResults) =>
        results[name]?.attempts.map((attempt) => (attempt.output as { outcome?: unknown })?.outcome);
      expect(extensionOrders[name]?.state).toBe(scenario.finalState);
      expect(outcomes(extensionOrders)).toEqual(scenario.outcomes);
      expect(localOrders[name]).toEqual(extensionOrders[name]);
    },
  );
});
