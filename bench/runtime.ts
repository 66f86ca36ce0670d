// npm run bench:runtime [-- --instances N --extension-instances N --json]
// Completed orchestrations per second on the local durable runtime (SQLite in memory, and on a file
// opened as the embedded host opens its own) and, in the same run, on the in-memory test backend of
// @microsoft/durabletask-js and, where a .NET SDK 8 or later is installed, on Microsoft's Durable Task
// extension on Azurite (bench/runtime-extension.ts; with --extension, which the npm script gives: the
// bench's runtime yardstick and bench:runtime:compare run the script without it). --json prints one
// JSON object instead of the table. Each figure is the median of three runs after a warm-up run (see
// ROUNDS); run with --expose-gc (as the npm script does), each run starts from a collected heap.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  InMemoryOrchestrationBackend,
  type OrchestrationContext,
  OrchestrationStatus,
  TestOrchestrationClient,
  TestOrchestrationWorker,
  whenAny,
} from "@microsoft/durabletask-js";
import { LocalDurableRuntime } from "../laptop/durable/local-durable-runtime.js";
import { singleRowCommitsPerSecond } from "../laptop/embedded/demo.js";
import { EMBEDDED_SYNCHRONOUS } from "../laptop/embedded/embedded-stack.js";
import { findDotnetSdk } from "../laptop/extension-host/dotnet-sdk.js";
import { captureRegistrations } from "../laptop/worker/registration-capture.js";
import { SystemClock } from "../src/adapters/clock/system-clock.js";
import { JsonLogger } from "../src/adapters/logging/json-logger.js";
import { openDatabase } from "../src/adapters/sqlite/database.js";
import { BENCH, registerBenchApp } from "./bench-app.js";
import {
  type ExtensionEngine,
  type Scenario as ExtensionScenario,
  startExtensionEngine,
} from "./runtime-extension.js";

const USAGE =
  "usage: npm run bench:runtime -- [--instances <n>] [--extension-instances <n>] [--extension] [--full-replay] [--json]\n" +
  "  instances of each run on ours and durabletask-js 1 to 100000 (default 500); on the extension 1 to 100000\n" +
  "  (default 100: it completes a few orchestrations a second on Azurite)";

interface Options {
  readonly instances: number;
  readonly extensionInstances: number;
  readonly extension: boolean;
  readonly json: boolean;
  readonly fullReplay: boolean;
}

function options(): Options {
  try {
    const { values } = parseArgs({
      options: {
        instances: { type: "string", default: "500" },
        "extension-instances": { type: "string", default: "100" },
        extension: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
        // Ours as the embedded host runs it (replay sessions) unless asked to replay every episode in full.
        "full-replay": { type: "boolean", default: false },
      },
      strict: true,
    });
    const count = (flag: string, raw: string) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < 1 || n > 100_000) throw new Error(`bad --${flag} ${raw}`);
      return n;
    };
    return {
      instances: count("instances", values.instances),
      extensionInstances: count("extension-instances", values["extension-instances"]),
      extension: values.extension,
      json: values.json,
      fullReplay: values["full-replay"],
    };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

type Scenario = ExtensionScenario;

/** What each scenario's orchestration returns; every instance's output is checked, on both engines. */
const EXPECTED_OUTPUT: Record<Scenario, unknown> = { sequence: 5, race: "reply" };

/** Starts `n` instances at once and returns completed orchestrations per second. */
async function measure(
  n: number,
  start: (i: number) => Promise<void>,
  finished: (i: number) => Promise<void>,
) {
  // Each run starts from a collected heap, not with the garbage the previous run (of either engine) left.
  (globalThis as { gc?: () => void }).gc?.();
  const begin = performance.now();
  await Promise.all(Array.from({ length: n }, (_, i) => start(i)));
  await Promise.all(Array.from({ length: n }, (_, i) => finished(i)));
  return n / ((performance.now() - begin) / 1_000);
}

async function ours(scenario: Scenario, n: number, storage: "memory" | "file"): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "sas-bench-"));
  const db = openDatabase(storage === "memory" ? ":memory:" : join(dir, "bench.sqlite"), {
    synchronous: EMBEDDED_SYNCHRONOUS,
  });
  const registry = await captureRegistrations(registerBenchApp);
  const runtime = LocalDurableRuntime.open({
    db,
    clock: new SystemClock(),
    registry,
    logger: new JsonLogger(() => undefined, "error"),
    replaySessions: sessions,
  });
  try {
    const name = scenario === "sequence" ? BENCH.sequence : BENCH.race;
    return await measure(
      n,
      async (i) => {
        await runtime.startNew(name, { instanceId: `b-${i}` });
        if (scenario === "race") await runtime.raiseEvent(`b-${i}`, "reply", { ok: true });
      },
      async (i) => {
        const status = await runtime.waitForCompletion(`b-${i}`, 600_000);
        if (status.runtimeStatus !== "Completed" || status.output !== EXPECTED_OUTPUT[scenario]) {
          throw new Error(`b-${i} ended ${status.runtimeStatus} with ${JSON.stringify(status.output)}`);
        }
      },
    );
  } finally {
    await runtime.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function theirs(scenario: Scenario, n: number): Promise<number> {
  const backend = new InMemoryOrchestrationBackend();
  const worker = new TestOrchestrationWorker(backend);
  const client = new TestOrchestrationClient(backend);
  const increment = (_ctx: unknown, value: number) => value + 1;
  const send = (_ctx: unknown, step: string) => `sent ${step}`;
  worker.addNamedActivity("benchIncrement", increment);
  worker.addNamedActivity("benchSend", send);
  // durabletask-js orchestrators are async generators.
  worker.addNamedOrchestrator(BENCH.sequence, async function* (
    ctx: OrchestrationContext,
  ): AsyncGenerator<unknown, number, number> {
    let value = 0;
    for (let i = 0; i < 5; i++) value = yield ctx.callActivity("benchIncrement", value);
    return value;
  } as never);
  worker.addNamedOrchestrator(BENCH.race, async function* (
    ctx: OrchestrationContext,
  ): AsyncGenerator<unknown, string, unknown> {
    yield ctx.callActivity("benchSend", "step");
    const timer = ctx.createTimer(new Date(ctx.currentUtcDateTime.getTime() + 60_000));
    const reply = ctx.waitForExternalEvent("reply");
    const winner = yield whenAny([reply, timer]);
    return winner === reply ? "reply" : "timeout";
  } as never);
  // Its test worker always logs to the console; silence it as our runtime's logger is silenced.
  const saved = { info: console.info, debug: console.debug, warn: console.warn, log: console.log };
  Object.assign(console, { info: () => {}, debug: () => {}, warn: () => {}, log: () => {} });
  await worker.start();
  try {
    const name = scenario === "sequence" ? BENCH.sequence : BENCH.race;
    return await measure(
      n,
      async (i) => {
        await client.scheduleNewOrchestration(name, undefined, `b-${i}`);
        if (scenario === "race") await client.raiseOrchestrationEvent(`b-${i}`, "reply", { ok: true });
      },
      async (i) => {
        const state = await client.waitForOrchestrationCompletion(`b-${i}`, true, 600);
        const output = state?.serializedOutput === undefined ? undefined : JSON.parse(state.serializedOutput);
        if (state?.runtimeStatus !== OrchestrationStatus.COMPLETED || output !== EXPECTED_OUTPUT[scenario]) {
          throw new Error(`b-${i} ended ${state?.runtimeStatus} with ${state?.serializedOutput}`);
        }
      },
    );
  } finally {
    await worker.stop();
    backend.reset(); // clears the race's 60 s timers, which would otherwise hold the process open
    Object.assign(console, saved);
  }
}

const SCENARIOS = {
  sequence: "5-activity sequence",
  race: "activity, then event vs timer",
} as const satisfies Record<Scenario, string>;

const { instances, extensionInstances, json, fullReplay, extension: withExtension } = options();
const sessions = !fullReplay;
const round = (x: number) => Math.round(x).toLocaleString("en-US");

/**
 * Each figure is the median of ROUNDS runs, the engines alternating, after one unmeasured run of each
 * scenario on each engine: a first run is mostly the JIT compiling either engine, which is not what
 * the comparison is about.
 */
const ROUNDS = 3;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Microsoft's extension, started once (its start-up is not measured), or why it is left out. */
async function extensionEngine(): Promise<{ engine?: ExtensionEngine; notRun?: string }> {
  if (!withExtension) return { notRun: "left out (no --extension)" };
  const sdk = findDotnetSdk();
  if (!sdk.found) return { notRun: `no .NET SDK 8 or later (${sdk.why})` };
  return { engine: await startExtensionEngine() };
}

const extension = await extensionEngine();
const scenarios = [];
for (const scenario of ["sequence", "race"] as const) {
  await ours(scenario, instances, "memory");
  await theirs(scenario, instances);
  await extension.engine?.run(scenario, extensionInstances, EXPECTED_OUTPUT[scenario]);
  const runs = {
    memory: [] as number[],
    file: [] as number[],
    theirs: [] as number[],
    extension: [] as number[],
  };
  for (let round = 0; round < ROUNDS; round++) {
    runs.memory.push(await ours(scenario, instances, "memory"));
    runs.theirs.push(await theirs(scenario, instances));
    runs.file.push(await ours(scenario, instances, "file"));
    if (extension.engine)
      runs.extension.push(
        await extension.engine.run(scenario, extensionInstances, EXPECTED_OUTPUT[scenario]),
      );
  }
  scenarios.push({
    scenario,
    label: SCENARIOS[scenario],
    ours: { memory: median(runs.memory), file: median(runs.file) },
    theirs: median(runs.theirs),
    extension: extension.engine ? median(runs.extension) : null,
    runs,
  });
}
await extension.engine?.close();
const commits = {
  memory: await singleRowCommitsPerSecond(":memory:"),
  file: await singleRowCommitsPerSecond(tmpdir()),
};

if (json) {
  const report = {
    instances,
    replaySessions: sessions,
    unit: "completed orchestrations per second",
    file: `WAL, synchronous=${EMBEDDED_SYNCHRONOUS}`,
    scenarios: scenarios.map((s) => ({
      ...s,
      ratio: s.ours.memory / s.theirs,
      ratioToExtension: s.extension === null ? null : s.ours.memory / s.extension,
    })),
    extension: { instances: extensionInstances, ...(extension.notRun ? { notRun: extension.notRun } : {}) },
    singleRowCommitsPerSecond: commits,
  };
  console.log(JSON.stringify(report));
} else {
  console.log(
    `local durable runtime (${sessions ? "replay sessions" : "full replay every episode"}) vs @microsoft/durabletask-js in-memory backend, ${instances} instances each${extension.engine ? `, and Microsoft's Durable Task extension, ${extensionInstances} instances` : ""}, median of ${ROUNDS} runs after a warm-up`,
  );
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  console.log("");
  console.log(
    "scenario                          ours (memory)  ours (file)  durabletask-js  ours(memory)/theirs  extension  ours(memory)/extension",
  );
  for (const { label, ours: mine, theirs: peer, extension: real } of scenarios) {
    const vsReal = real === null ? "–" : (mine.memory / real).toFixed(0);
    console.log(
      `${label.padEnd(32)}  ${round(mine.memory).padStart(13)}  ${round(mine.file).padStart(11)}  ${round(peer).padStart(14)}  ${(mine.memory / peer).toFixed(2).padStart(19)}  ${(real === null ? "–" : real.toFixed(1)).padStart(9)}  ${vsReal.padStart(22)}`,
    );
  }
  console.log(
    extension.notRun
      ? `Microsoft's Durable Task extension: ${extension.notRun}`
      : `Microsoft's Durable Task extension: Azure Storage backend on Azurite, ${extensionInstances} instances a run, idle polling at most 1 s apart`,
  );
  console.log("");
  console.log(
    `figures are completed orchestrations per second; the file in WAL, synchronous=${EMBEDDED_SYNCHRONOUS}`,
  );
  console.log(
    `SQLite commits/s, one row per transaction, at the same settings: memory ${round(commits.memory)}, file ${round(commits.file)}`,
  );
}
