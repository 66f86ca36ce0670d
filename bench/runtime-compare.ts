// npm run bench:runtime:compare -- --base <checkout> [--pairs 8] [--instances 500] [--json]
// Whether a change made the local durable runtime slower: `bench:runtime` run in another checkout of
// this repository (the base: `git worktree add <dir> <commit>`, with its dependencies installed or
// node_modules linked) and in this one, alternately (base, this, this, base, ...), and each figure
// compared. A single run's figures swing by a fifth on a busy or throttled machine; pairs made one
// after the other in one sitting do not share that swing.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { integer, UsageError } from "./bench-options.js";
import { compareRuntimeRuns, comparisonTable, type RuntimeReport } from "./runtime-comparison.js";

const USAGE = [
  "usage: npm run bench:runtime:compare -- --base <dir> [--pairs <n>] [--instances <n>] [--json]",
  "  --base       another checkout of this repository with its dependencies (git worktree add <dir> <commit>)",
  "  --pairs      runs of each build, alternated, 1 to 100 (default 8)",
  "  --instances  orchestrations of each bench:runtime run, 1 to 100000 (default 500)",
  "  --json       print the runs and the comparison as JSON instead of the table",
].join("\n");

const ROOT = fileURLToPath(new URL("..", import.meta.url));

interface CompareOptions {
  readonly base: string;
  readonly pairs: number;
  readonly instances: number;
  readonly json: boolean;
}

export function parseCompareOptions(args: readonly string[]): CompareOptions {
  let values: { base?: string; pairs: string; instances: string; json: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        base: { type: "string" },
        pairs: { type: "string", default: "8" },
        instances: { type: "string", default: "500" },
        json: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!values.base) throw new UsageError("--base is required");
  const base = resolve(values.base);
  for (const needed of ["bench/runtime.ts", "node_modules"]) {
    if (!existsSync(resolve(base, needed))) {
      throw new UsageError(`--base ${values.base}: no ${needed} there (a checkout with its dependencies?)`);
    }
  }
  return {
    base,
    pairs: integer("pairs", values.pairs, 1, 100),
    instances: integer("instances", values.instances, 1, 100_000),
    json: values.json,
  };
}

/** One `bench:runtime --json` run in a checkout, as its own npm script runs it. */
function runIn(checkout: string, instances: number): RuntimeReport {
  const child = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", "bench/runtime.ts", "--json", "--instances", String(instances)],
    { cwd: checkout, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  );
  const lastLine = child.stdout.trim().split("\n").at(-1) ?? "";
  if (child.status !== 0 || !lastLine.startsWith("{")) {
    throw new Error(
      `bench:runtime in ${checkout} exited ${child.status}: ${child.stderr.trim().slice(-500)}`,
    );
  }
  return JSON.parse(lastLine) as RuntimeReport;
}

function main(): void {
  let options: CompareOptions;
  try {
    options = parseCompareOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    process.exit(2);
  }
  const runs = { base: [] as RuntimeReport[], head: [] as RuntimeReport[] };
  for (let pair = 0; pair < options.pairs; pair++) {
    // Which build goes first alternates, so neither always runs on the machine the other warmed.
    const order = pair % 2 === 0 ? (["base", "head"] as const) : (["head", "base"] as const);
    for (const which of order) {
      runs[which].push(runIn(which === "base" ? options.base : ROOT, options.instances));
    }
    console.error(`pair ${pair + 1} of ${options.pairs} done`);
  }
  const rows = compareRuntimeRuns(runs.base, runs.head);
  if (options.json) {
    console.log(JSON.stringify({ base: options.base, instances: options.instances, rows, runs }));
    return;
  }
  console.log(`bench:runtime, ${options.pairs} alternated pairs of ${options.instances} instances each`);
  console.log(`base: ${options.base}`);
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  console.log("");
  console.log(comparisonTable(rows));
  console.log("");
  console.log("figures are completed orchestrations per second (the last one of each scenario a ratio)");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
