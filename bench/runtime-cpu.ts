// tsx bench/runtime-cpu.ts [--root <checkout>] [--instances 1000] [--runs 8] [--json]
// The local durable runtime's steady cost, beside bench:runtime's short runs: each of its scenarios
// with N instances at once, in memory with replay sessions (as the embedded host runs them), R times
// in one process, the first run unmeasured; the median completed orchestrations a second and the
// median CPU time (`process.cpuUsage`, every thread) per orchestration. `--root` measures another
// checkout's runtime with this same script, so that two builds are measured alike
// (`npm run bench:runtime:compare -- --yardstick cpu`).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { integer, parseFlags, UsageError } from "./bench-options.js";
import { median } from "./runtime-comparison.js";

const USAGE = [
  "usage: tsx bench/runtime-cpu.ts [--root <checkout>] [--instances <n>] [--runs <n>] [--json]",
  "  --root       the checkout whose runtime is measured (default this one)",
  "  --instances  orchestrations started at once in each run, 1 to 100000 (default 1000)",
  "  --runs       runs of each scenario, the first unmeasured, 2 to 100 (default 8)",
  "  --json       print the figures as one JSON object",
].join("\n");

export interface CpuOptions {
  readonly root: string;
  readonly instances: number;
  readonly runs: number;
  readonly json: boolean;
}

export function parseCpuOptions(args: readonly string[], here: string): CpuOptions {
  const values = parseFlags(args, {
    root: { type: "string" },
    instances: { type: "string", default: "1000" },
    runs: { type: "string", default: "8" },
    json: { type: "boolean", default: false },
  });
  const root = resolve(values.root ?? here);
  if (!runtimeLayoutOf(root)) {
    throw new UsageError(
      `--root ${values.root}: no local durable runtime there (a checkout of this repository?)`,
    );
  }
  return {
    root,
    instances: integer("instances", values.instances, 1, 100_000),
    runs: integer("runs", values.runs, 2, 100),
    json: values.json,
  };
}

type Scenario = "sequence" | "race";

/** Where a checkout keeps the runtime and the registration capture: under laptop/, or (before it) src/local/. */
const RUNTIME_LAYOUTS = [
  { runtime: "laptop/durable/local-durable-runtime.ts", capture: "laptop/worker/registration-capture.ts" },
  { runtime: "src/local/durable/local-durable-runtime.ts", capture: "src/local/registration-capture.ts" },
] as const;

export type RuntimeLayout = (typeof RUNTIME_LAYOUTS)[number];

export const RUNTIME_LAYOUT_NOW: RuntimeLayout = RUNTIME_LAYOUTS[0];

export function runtimeLayoutOf(root: string): RuntimeLayout | undefined {
  return RUNTIME_LAYOUTS.find((layout) => existsSync(resolve(root, layout.runtime)));
}

/** The modules of the checkout under measurement, as bench:runtime uses them. */
async function modulesOf(root: string) {
  const load = (path: string) => import(pathToFileURL(resolve(root, path.replace(/\.ts$/, ".js"))).href);
  const layout = runtimeLayoutOf(root);
  if (!layout) throw new Error(`${root}: no local durable runtime there`);
  const [clock, logging, sqlite, runtime, capture, app] = await Promise.all([
    load("src/adapters/clock/system-clock.js"),
    load("src/adapters/logging/json-logger.js"),
    load("src/adapters/sqlite/database.js"),
    load(layout.runtime),
    load(layout.capture),
    load("bench/bench-app.js"),
  ]);
  return { clock, logging, sqlite, runtime, capture, app };
}

async function measure(root: string, scenario: Scenario, instances: number, runs: number) {
  const m = await modulesOf(root);
  const registry = await m.capture.captureRegistrations(m.app.registerBenchApp);
  const name = scenario === "sequence" ? m.app.BENCH.sequence : m.app.BENCH.race;
  const rates: number[] = [];
  const cpuMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const db = m.sqlite.openDatabase(":memory:");
    const runtime = m.runtime.LocalDurableRuntime.open({
      db,
      clock: new m.clock.SystemClock(),
      registry,
      logger: new m.logging.JsonLogger(() => undefined, "error"),
      replaySessions: true,
    });
    (globalThis as { gc?: () => void }).gc?.();
    const cpuBefore = process.cpuUsage();
    const begin = performance.now();
    await Promise.all(
      Array.from({ length: instances }, async (_, i) => {
        await runtime.startNew(name, { instanceId: `c-${i}` });
        if (scenario === "race") await runtime.raiseEvent(`c-${i}`, "reply", { ok: true });
      }),
    );
    for (let i = 0; i < instances; i++) {
      const status = await runtime.waitForCompletion(`c-${i}`, 600_000);
      if (status.runtimeStatus !== "Completed") throw new Error(`c-${i} ended ${status.runtimeStatus}`);
    }
    const seconds = (performance.now() - begin) / 1_000;
    const cpu = process.cpuUsage(cpuBefore);
    await runtime.close();
    db.close();
    // The first run is mostly the JIT compiling the runtime: not its steady cost.
    if (run === 0) continue;
    rates.push(instances / seconds);
    cpuMs.push((cpu.user + cpu.system) / 1_000 / instances);
  }
  return { ratePerSecond: median(rates), cpuMsPerOrchestration: median(cpuMs) };
}

/** The figures by name, in the order a comparison prints them. */
export type CpuFigures = Readonly<Record<string, number>>;

async function main(): Promise<void> {
  let options: CpuOptions;
  try {
    options = parseCpuOptions(process.argv.slice(2), fileURLToPath(new URL("..", import.meta.url)));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    process.exit(2);
  }
  const figures: Record<string, number> = {};
  for (const scenario of ["sequence", "race"] as const) {
    const { ratePerSecond, cpuMsPerOrchestration } = await measure(
      options.root,
      scenario,
      options.instances,
      options.runs,
    );
    figures[`${scenario}, orchestrations/s`] = ratePerSecond;
    figures[`${scenario}, CPU ms per orchestration`] = cpuMsPerOrchestration;
  }
  if (options.json) {
    console.log(
      JSON.stringify({ root: options.root, instances: options.instances, runs: options.runs, figures }),
    );
    return;
  }
  console.log(
    `local durable runtime in ${options.root}: ${options.instances} instances at once, in memory with replay sessions, median of ${options.runs - 1} runs after a warm-up`,
  );
  for (const [figure, value] of Object.entries(figures)) {
    console.log(
      `${figure.padEnd(36)} ${value < 10 ? value.toFixed(4) : Math.round(value).toLocaleString("en-US")}`,
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
