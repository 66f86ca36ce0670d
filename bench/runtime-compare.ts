// npm run bench:runtime:compare -- --base <checkout> [--yardstick bench|cpu] [--pairs 8] [--instances <n>] [--json]
// Whether a change made the local durable runtime slower: a benchmark run for another checkout of
// this repository (the base: `git worktree add <dir> <commit>`, with its dependencies installed or
// node_modules linked) and for this one, alternately (base, this, this, base, ...), and each figure
// compared. A single run's figures swing by a fifth on a busy or throttled machine; pairs made one
// after the other in one sitting do not share that swing. The yardstick is `bench:runtime` as each
// checkout has it (`bench`), or this checkout's `bench/runtime-cpu.ts` pointed at each (`cpu`:
// longer runs, and the CPU time an orchestration costs).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { integer, optionsOrExit, parseFlags, UsageError } from "./bench-options.js";
import {
  compareRuns,
  comparisonTable,
  type Figures,
  type RuntimeReport,
  runtimeFigures,
} from "./runtime-comparison.js";
import { RUNTIME_LAYOUT_NOW, runtimeLayoutOf } from "./runtime-cpu.js";

const USAGE = [
  "usage: npm run bench:runtime:compare -- --base <dir> [--yardstick bench|cpu] [--pairs <n>] [--instances <n>] [--json]",
  "  --base       another checkout of this repository with its dependencies (git worktree add <dir> <commit>)",
  "  --yardstick  bench: each checkout's own bench:runtime (default); cpu: bench/runtime-cpu.ts on each",
  "  --pairs      runs of each build, alternated, 1 to 100 (default 8)",
  "  --instances  orchestrations of each run, 1 to 100000 (default 500 for bench, 1000 for cpu)",
  "  --json       print the runs and the comparison as JSON instead of the table",
].join("\n");

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const YARDSTICKS = ["bench", "cpu"] as const;
type Yardstick = (typeof YARDSTICKS)[number];

interface CompareOptions {
  readonly base: string;
  readonly yardstick: Yardstick;
  readonly pairs: number;
  readonly instances: number;
  readonly json: boolean;
}

export function parseCompareOptions(args: readonly string[]): CompareOptions {
  const values = parseFlags(args, {
    base: { type: "string" },
    yardstick: { type: "string", default: "bench" },
    pairs: { type: "string", default: "8" },
    instances: { type: "string" },
    json: { type: "boolean", default: false },
  });
  if (!values.base) throw new UsageError("--base is required");
  const yardstick = YARDSTICKS.find((known) => known === values.yardstick);
  if (!yardstick) throw new UsageError(`--yardstick ${values.yardstick}: must be ${YARDSTICKS.join(" or ")}`);
  const base = resolve(values.base);
  // What a run reads of the base: its own benchmark, or the modules bench/runtime-cpu.ts loads from it.
  const reads =
    yardstick === "bench"
      ? ["bench/runtime.ts"]
      : [...Object.values(runtimeLayoutOf(base) ?? RUNTIME_LAYOUT_NOW), "bench/bench-app.ts"];
  for (const needed of [...reads, "node_modules"]) {
    if (!existsSync(resolve(base, needed))) {
      throw new UsageError(`--base ${values.base}: no ${needed} there (a checkout with its dependencies?)`);
    }
  }
  return {
    base,
    yardstick,
    pairs: integer("pairs", values.pairs, 1, 100),
    instances: integer("instances", values.instances ?? (yardstick === "bench" ? "500" : "1000"), 1, 100_000),
    json: values.json,
  };
}

/**
 * One run for a checkout: its own `bench:runtime --json`, as its npm script runs it, or this
 * checkout's `bench/runtime-cpu.ts` measuring its runtime. Either runs in the checkout, on its modules.
 */
function runFor(checkout: string, options: CompareOptions): Figures {
  const script =
    options.yardstick === "bench"
      ? ["bench/runtime.ts", "--json"]
      : [resolve(ROOT, "bench/runtime-cpu.ts"), "--json", "--root", checkout];
  const child = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", ...script, "--instances", String(options.instances)],
    { cwd: checkout, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  );
  if (child.error) throw new Error(`${script[0]} for ${checkout} did not start: ${child.error.message}`);
  const figures = child.status === 0 ? figuresFromOutput(child.stdout) : undefined;
  if (!figures) {
    const end = child.signal ? `was killed by ${child.signal}` : `exited ${child.status}`;
    throw new Error(`${script[0]} for ${checkout} ${end}: ${child.stderr.trim().slice(-500)}`);
  }
  return figures;
}

/** The figures a run printed on its last line, as either yardstick prints them; undefined if none. */
export function figuresFromOutput(stdout: string): Figures | undefined {
  const lastLine = stdout.trim().split("\n").at(-1) ?? "";
  if (!lastLine.startsWith("{")) return undefined;
  try {
    const printed = JSON.parse(lastLine) as RuntimeReport | { readonly figures: Figures };
    if ("figures" in printed) return printed.figures;
    return Array.isArray(printed.scenarios) ? runtimeFigures(printed) : undefined;
  } catch {
    return undefined;
  }
}

function main(): void {
  const options = optionsOrExit(() => parseCompareOptions(process.argv.slice(2)), USAGE);
  const runs = { base: [] as Figures[], head: [] as Figures[] };
  let failure: Error | undefined;
  for (let pair = 0; pair < options.pairs && !failure; pair++) {
    // Which build goes first alternates, so neither always runs on the machine the other warmed.
    const order = pair % 2 === 0 ? (["base", "head"] as const) : (["head", "base"] as const);
    try {
      for (const which of order) runs[which].push(runFor(which === "base" ? options.base : ROOT, options));
      console.error(`pair ${pair + 1} of ${options.pairs} done`);
    } catch (error) {
      failure = error as Error;
    }
  }
  if (failure) {
    // A failed run ends the sitting; the pairs made before it are still worth printing.
    console.error(failure.message);
    process.exitCode = 1;
    if (Math.min(runs.base.length, runs.head.length) === 0) return;
    console.error("the pairs made before it:");
  }
  const rows = compareRuns(runs.base, runs.head);
  const { base, yardstick, instances } = options;
  const pairs = rows[0]?.pairs ?? 0;
  if (options.json) {
    console.log(JSON.stringify({ base, yardstick, instances, rows, runs }));
    return;
  }
  const what = yardstick === "bench" ? "bench:runtime" : "bench/runtime-cpu.ts";
  console.log(`${what}, ${pairs} alternated pairs of ${instances} instances each`);
  console.log(`base: ${base}`);
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  console.log("");
  console.log(comparisonTable(rows));
  console.log("");
  console.log(
    yardstick === "bench"
      ? "figures are completed orchestrations per second (the last one of each scenario a ratio)"
      : "a higher rate is better, a higher CPU time per orchestration worse",
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
