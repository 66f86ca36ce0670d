// npm run bench:compare -- --base <checkout> [--orders 5000] [--pairs 3] [--data memory,disk] [--azure] [--json]
// What a change did to the work each order costs: the whole demo, run by another checkout of this
// repository (the base: `git worktree add <dir> <commit>`, with its dependencies) and by this one,
// alternately (base, this, this, base, ...), each in a process of its own in its own checkout. Per
// order: CPU, and from a run on disk the durable work its database kept; with --azure, the Cosmos DB
// requests, Service Bus operations and durable work of each checkout's `sas host` on the Azure path.
// On Linux, each run's CPU by thread too: whole process, and per order over the demo's measured
// seconds (thread-cpu.ts).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { integer, optionsOrExit, parseFlags, UsageError } from "./bench-options.js";
import {
  type AzureWorkRead,
  alternate,
  azureFigures,
  azureKinds,
  type Build,
  compareSection,
  type DemoSummaryRead,
  demoFigures,
  demoSummaryFromOutput,
  judgeTargets,
  type SectionComparison,
  type Sitting,
  STORAGE_KINDS,
  type StorageKind,
  targetLines,
  threadFigures,
  windowThreadFigures,
} from "./demo-comparison.js";
import { comparisonTable, type Figures } from "./runtime-comparison.js";
import { type ThreadWatch, threadsAtStartup, watchThreads } from "./thread-cpu.js";
import { countDurableWork } from "./work-counts.js";

const USAGE = [
  "usage: npm run bench:compare -- --base <dir> [--orders <n>] [--pairs <n>] [--data memory,disk]",
  "                                [--azure] [--azure-orders <n>] [--json]",
  "  --base          another checkout of this repository with its dependencies (git worktree add <dir> <commit>)",
  "  --orders        orders of each demo run, 1 to 1000000 (default 5000)",
  "  --pairs         runs of each build, alternated, 1 to 100 (default 3)",
  "  --data          where the demo keeps its database: memory, disk or both (default memory,disk)",
  "  --azure         also measure each build's `sas host` on the Azure path (Cosmos DB, Service Bus)",
  "  --azure-orders  orders of each Azure-path run, 1 to 1000000 (default --orders)",
  "  --json          print the runs and the comparison as JSON instead of the table",
  "On Linux each demo's CPU is also split by thread (main, V8 and loader, workers): in seconds over the",
  "whole process, and per order over the demo's measured seconds, as the demo's own CPU per order is.",
  "Exits 0 when every run was made, 1 when one failed, 2 on bad flags; the targets are reported, not enforced.",
].join("\n");

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Where a checkout's command line is: this layout's, then the one before the move to laptop/. */
export const CLI_LAYOUTS = ["laptop/cli/main.ts", "src/local/cli.ts"] as const;

export interface CompareOptions {
  readonly base: string;
  readonly orders: number;
  readonly pairs: number;
  readonly data: readonly StorageKind[];
  readonly azure: boolean;
  readonly azureOrders: number;
  readonly json: boolean;
}

/** The checkout's command line (absolute), in whichever layout it has; undefined if neither. */
export function checkoutCli(checkout: string): string | undefined {
  return CLI_LAYOUTS.map((cli) => resolve(checkout, cli)).find((cli) => existsSync(cli));
}

export function parseCompareOptions(args: readonly string[]): CompareOptions {
  const values = parseFlags(args, {
    base: { type: "string" },
    orders: { type: "string", default: "5000" },
    pairs: { type: "string", default: "3" },
    data: { type: "string", default: STORAGE_KINDS.join(",") },
    azure: { type: "boolean", default: false },
    "azure-orders": { type: "string" },
    json: { type: "boolean", default: false },
  });
  if (!values.base) throw new UsageError("--base is required");
  const base = resolve(values.base);
  if (!existsSync(base)) throw new UsageError(`--base ${values.base}: no such directory`);
  if (!existsSync(join(base, "node_modules"))) {
    throw new UsageError(`--base ${values.base}: no node_modules there (a checkout with its dependencies?)`);
  }
  if (!checkoutCli(base)) {
    throw new UsageError(
      `--base ${values.base}: no demo command there (neither ${CLI_LAYOUTS.join(" nor ")})`,
    );
  }
  const orders = integer("orders", values.orders, 1, 1_000_000);
  return {
    base,
    orders,
    pairs: integer("pairs", values.pairs, 1, 100),
    data: storageKinds(values.data),
    azure: values.azure,
    azureOrders: integer("azure-orders", values["azure-orders"] ?? String(orders), 1, 1_000_000),
    json: values.json,
  };
}

/** `--data`: distinct storage kinds, run in the order given. */
export function storageKinds(raw: string): StorageKind[] {
  const names = raw.split(",").map((name) => name.trim());
  const kinds = names.map((name) => {
    const kind = STORAGE_KINDS.find((known) => known === name);
    if (!kind) throw new UsageError(`--data ${raw}: each must be ${STORAGE_KINDS.join(" or ")}`);
    return kind;
  });
  if (new Set(kinds).size !== kinds.length) throw new UsageError(`--data ${raw}: a kind is given twice`);
  return kinds;
}

/** One demo run of a checkout, in a process of its own, and its figures (by thread too, on Linux). */
async function demoRun(checkout: string, kind: StorageKind, orders: number): Promise<Figures> {
  const cli = checkoutCli(checkout);
  if (!cli) throw new Error(`${checkout}: no demo command`);
  const dir = kind === "disk" ? mkdtempSync(join(tmpdir(), "sas-compare-")) : undefined;
  try {
    const timeout = String(Math.min(86_400, Math.max(300, Math.ceil(orders / 20))));
    const args = ["demo", "--orders", String(orders), "--json", "--timeout", timeout];
    const child = await runWatched(checkout, [cli, ...args, "--data", dir ?? ":memory:"]);
    const summary = child.status === 0 ? demoSummaryFromOutput(child.stdout) : undefined;
    if (!summary) {
      const end = child.signal ? `was killed by ${child.signal}` : `exited ${child.status}`;
      throw new Error(`the demo of ${checkout} (${kind}) ${end}: ${child.stderr.trim().slice(-500)}`);
    }
    return {
      ...demoFigures(kind, summary, dir ? countDurableWork(join(dir, "sas.sqlite")) : null),
      ...byThread(kind, summary, child.threads),
    };
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** The run's CPU by thread, whole process and over its measured seconds; nothing without `/proc`. */
function byThread(kind: StorageKind, summary: DemoSummaryRead, threads: ThreadWatch | undefined): Figures {
  const whole = threads?.whole;
  if (!threads || !whole) return {};
  const from = Date.parse(summary.window?.from ?? "");
  const to = Date.parse(summary.window?.to ?? "");
  const within = Number.isFinite(from) && Number.isFinite(to) ? threads.within(from, to) : undefined;
  return {
    ...threadFigures(kind, whole),
    ...(within ? windowThreadFigures(kind, within, summary.orders.submitted) : {}),
  };
}

interface WatchedRun {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly threads: ThreadWatch | undefined;
}

/** How each checkout's CLI is run: under `tsx`, from its TypeScript. */
const NODE_ARGS = ["--import", "tsx"] as const;

const threadsAtStart = new Map<string, number | undefined>();

/** The threads a checkout's process has when its own code starts, counted once per checkout. */
function startupThreads(checkout: string): number | undefined {
  if (!threadsAtStart.has(checkout)) threadsAtStart.set(checkout, threadsAtStartup(NODE_ARGS, checkout));
  return threadsAtStart.get(checkout);
}

/** Runs the checkout's CLI under `tsx`, reading its threads' CPU while it runs. */
function runWatched(checkout: string, args: readonly string[]): Promise<WatchedRun> {
  return new Promise((resolve, reject) => {
    const withProcess = startupThreads(checkout);
    const child = spawn(process.execPath, [...NODE_ARGS, ...args], { cwd: checkout });
    const watch = child.pid === undefined ? undefined : watchThreads(child.pid, { withProcess });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", (error) => {
      watch?.stop();
      reject(new Error(`the demo of ${checkout} did not start: ${error.message}`));
    });
    // The threads are read until the process ends; its output until its streams close.
    let threads: ThreadWatch | undefined;
    child.once("exit", () => {
      threads = watch?.stop();
    });
    child.once("close", (status, signal) => {
      const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString("utf8");
      resolve({ status, signal, stdout: text(out), stderr: text(err), threads });
    });
  });
}

export type MeasureAzureWork = (options: { checkout: string; orders: number }) => Promise<AzureWorkRead>;

/** `measureAzureWork` from bench/azure-work.ts, loaded only when asked for. */
async function loadAzureWork(): Promise<MeasureAzureWork> {
  // A specifier the compiler does not follow, so this command builds and runs without that module.
  const specifier = "./azure-work.js";
  let loaded: { measureAzureWork?: MeasureAzureWork };
  try {
    loaded = (await import(specifier)) as typeof loaded;
  } catch (error) {
    throw new Error(`--azure needs bench/azure-work.ts: ${(error as Error).message}`);
  }
  if (typeof loaded.measureAzureWork !== "function")
    throw new Error("bench/azure-work.ts has no measureAzureWork");
  return loaded.measureAzureWork;
}

export interface SectionRuns {
  readonly section: StorageKind | "azure";
  readonly base: Figures[];
  readonly head: Figures[];
  /** The Azure path's counts as measured, for --json. */
  readonly measured?: Sitting<AzureWorkRead>;
}

export interface Sittings {
  readonly sections: SectionRuns[];
  readonly failure?: Error;
}

type DemoRun = (checkout: string, kind: StorageKind, orders: number) => Figures | Promise<Figures>;

/**
 * Every section's pairs: each storage kind's demo runs, then the Azure path's if `measure` is given.
 * A failed run ends the sitting, and the sections made before it stand.
 */
export async function runSittings(
  options: CompareOptions,
  measure?: MeasureAzureWork,
  demo: DemoRun = demoRun,
): Promise<Sittings> {
  const checkout = (build: Build) => (build === "base" ? options.base : ROOT);
  const progress = (section: string) => (done: number) =>
    console.error(`${section}: pair ${done} of ${options.pairs} done`);
  const sections: SectionRuns[] = [];
  for (const kind of options.data) {
    const sitting = await alternate(
      options.pairs,
      (build) => demo(checkout(build), kind, options.orders),
      progress(kind),
    );
    sections.push({ section: kind, base: sitting.base, head: sitting.head });
    if (sitting.failure) return { sections, failure: sitting.failure };
  }
  if (!measure) return { sections };
  const measured = await alternate(
    options.pairs,
    (build) => measure({ checkout: checkout(build), orders: options.azureOrders }),
    progress("azure"),
  );
  const kinds = azureKinds([...measured.base, ...measured.head]);
  const figures = (runs: AzureWorkRead[]) => runs.map((run) => azureFigures(run, kinds));
  sections.push({ section: "azure", base: figures(measured.base), head: figures(measured.head), measured });
  return measured.failure ? { sections, failure: measured.failure } : { sections };
}

function report(options: CompareOptions, sections: readonly SectionRuns[]): void {
  const compared = sections
    .filter((s) => Math.min(s.base.length, s.head.length) > 0)
    .map((s): [SectionRuns, SectionComparison] => [s, compareSection(s.base, s.head)]);
  const rows = compared.flatMap(([, comparison]) => comparison.rows);
  const targets = judgeTargets(rows);
  const { base, orders, azureOrders } = options;
  if (options.json) {
    const runs = Object.fromEntries(
      sections.map((s) => [s.section, { base: s.base, head: s.head, measured: s.measured }]),
    );
    console.log(JSON.stringify({ base, head: ROOT, orders, azureOrders, rows, targets, runs }));
    return;
  }
  const pairs = compared.map(([s, c]) => `${s.section} ${c.rows[0]?.pairs ?? 0}`).join(", ");
  console.log(
    `the demo, ${orders} orders a run${options.azure ? ` (${azureOrders} on the Azure path)` : ""}`,
  );
  console.log(`alternated pairs: ${pairs}`);
  console.log(`base: ${base}`);
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  console.log("");
  console.log(comparisonTable(rows));
  for (const [s, c] of compared) {
    if (c.notCompared.length > 0)
      console.log(`${s.section}: not in every run, not compared: ${c.notCompared.join(", ")}`);
  }
  console.log("");
  console.log("targets (issue 38), each the median pair ratio, this build over the base:");
  for (const line of targetLines(targets)) console.log(line);
  console.log("");
  console.log("lower is better for every figure but orders/s; the Cosmos DB request units are an estimate");
}

async function main(): Promise<void> {
  const options = optionsOrExit(() => parseCompareOptions(process.argv.slice(2)), USAGE);
  // Loaded before any run, so that a missing module ends the sitting before it starts.
  let measure: MeasureAzureWork | undefined;
  try {
    measure = options.azure ? await loadAzureWork() : undefined;
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 1;
    return;
  }
  const { sections, failure } = await runSittings(options, measure);
  if (failure) {
    console.error(failure.message);
    process.exitCode = 1;
    if (!sections.some((s) => Math.min(s.base.length, s.head.length) > 0)) return;
    console.error("the pairs made before it:");
  }
  report(options, sections);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
