/**
 * Microsoft's Durable Task extension as a third engine of `npm run bench:runtime`: the extension host
 * (laptop/extension-host/) on an Azurite of its own, running the bench's orchestrations registered as
 * the app registers its functions, each invocation served in this process; the SDK's durable client
 * starts the instances and raises the events (each once its instance runs, see `untilRunning`). A run ends when every instance
 * has completed; its time runs from the first start to the latest completion the extension recorded.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import azureFunctions from "@azure/functions";
import * as df from "durable-functions";
import { buildExtensionHost } from "../laptop/extension-host/extension-build.js";
import { type ExtensionHost, startExtensionHost } from "../laptop/extension-host/extension-process.js";
import { startAzuriteStorage } from "../laptop/stand-ins/azurite.js";
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

/** The SDK's client as `df.getClient` makes it for an invocation whose durable client input has `data`. */
function sdkClient(data: unknown): df.DurableClient {
  const binding = df.input.durableClient();
  const context = new azureFunctions.InvocationContext({
    functionName: "benchRuntime",
    options: { extraInputs: [binding] },
  });
  context.extraInputs.set(binding, data);
  return df.getClient(context);
}

/**
 * Starts the extension host. Its host.json names the hub and lets an idle queue's polling back off to a
 * second at most (the default is 30 s), so that a run does not begin by waiting out the idle back-off
 * the previous run's end left behind.
 */
export async function startExtensionEngine(): Promise<ExtensionEngine> {
  const folder = mkdtempSync(join(tmpdir(), "sas-bench-extension-"));
  const hostJsonPath = join(folder, "host.json");
  writeFileSync(
    hostJsonPath,
    JSON.stringify({
      version: "2.0",
      extensions: {
        durableTask: { hubName: "BenchRuntime", storageProvider: { maxQueuePollingInterval: "00:00:01" } },
      },
      logging: { logLevel: { default: "Warning" } },
    }),
  );
  const azurite = await startAzuriteStorage({ location: join(folder, "azurite") });
  let host: ExtensionHost | undefined;
  const close = async () => {
    await host?.close();
    await azurite.stop();
    rmSync(folder, { recursive: true, force: true, maxRetries: 10 });
  };
  try {
    host = await startExtensionHost({
      dll: (await buildExtensionHost()).dll,
      registry: await captureRegistrations(registerBenchApp),
      hostJsonPath,
      webhookUrl: "http://127.0.0.1:9/runtime/webhooks/durabletask?code=unused",
      settings: { AzureWebJobsStorage: azurite.connectionString },
      logger: QUIET,
      log: new PassThrough().resume(),
    });
  } catch (error) {
    await close();
    throw error;
  }
  const client = sdkClient(host.ready.clientData);
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
