import * as df from "durable-functions";
import { startExtensionOnAzurite } from "../laptop/functions-host/extension-on-azurite.js";
import { captureRegistrations } from "../laptop/worker/registration-capture.js";
import type { Logger } from "../src/ports/logger.js";
import { BENCH, registerBenchApp } from "./bench-app.js";

export type Scenario = "sequence" | "race";

export interface ExtensionEngine {
  /** Completed orchestrations per second for `n` instances started at once; checks each one's output. */
  run(scenario: Scenario, n: number, expected: unknown): Promise<number>;
  close(): Promise<void>;
}

const QUIET: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => QUIET };
const POLL_MS = 1_000;

/** Starts the extension host on an Azurite of its own. */
export async function startExtensionEngine(): Promise<ExtensionEngine> {
  const { client, close } = await startExtensionOnAzurite({
    registry: await captureRegistrations(registerBenchApp),
    hubName: "BenchRuntime",
    logger: QUIET,
  });
  let runs = 0;
  return {
    run: (scenario, n, expected) => measure(client, `x${++runs}`, scenario, n, expected),
    close,
  };
}

async function measure(
  client: df.DurableClient,
  prefix: string,
  scenario: Scenario,
  n: number,
  expected: unknown,
): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const name = scenario === "sequence" ? BENCH.sequence : BENCH.race;
  const begin = new Date();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      await client.startNew(name, { instanceId: `${prefix}-${i}` });
      if (scenario !== "race") return;
      await untilRunning(client, `${prefix}-${i}`);
      await client.raiseEvent(`${prefix}-${i}`, "reply", { ok: true });
    }),
  );
  const done = await untilCompleted(client, prefix, begin, n);
  for (const status of done) {
    if (status.output !== expected)
      throw new Error(`${status.instanceId} ended with ${JSON.stringify(status.output)}`);
  }
  const last = Math.max(...done.map((s) => new Date(s.lastUpdatedTime).getTime()));
  return n / ((last - begin.getTime()) / 1_000);
}

/**
 * Waits until the instance runs. Raised at once after the start, as on the other engines, one instance
 * of 50 in a trial run never saw its event on the Azure Storage backend and ended by its 60 s timer.
 */
async function untilRunning(client: df.DurableClient, instanceId: string): Promise<void> {
  for (;;) {
    const status = await client.getStatus(instanceId);
    if (status.runtimeStatus !== df.OrchestrationRuntimeStatus.Pending) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Polls (each second, at most 10 minutes) until `n` instances of this run have completed; fails on any other end. */
async function untilCompleted(client: df.DurableClient, prefix: string, from: Date, n: number) {
  const deadline = Date.now() + 600_000;
  const ended = [
    df.OrchestrationRuntimeStatus.Completed,
    df.OrchestrationRuntimeStatus.Failed,
    df.OrchestrationRuntimeStatus.Terminated,
  ];
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const statuses = (await client.getStatusBy({ createdTimeFrom: from, runtimeStatus: ended })).filter((s) =>
      s.instanceId.startsWith(`${prefix}-`),
    );
    const failed = statuses.find((s) => s.runtimeStatus !== df.OrchestrationRuntimeStatus.Completed);
    if (failed) throw new Error(`${failed.instanceId} ended ${failed.runtimeStatus}`);
    if (statuses.length >= n) return statuses;
  }
  throw new Error(`not every instance of ${prefix} completed in 10 minutes`);
}
