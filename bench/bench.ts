// npm run bench [-- --orders 5000 --azure-orders 1000 --rates 100,200,400 --seconds 20 --only <yardstick,...>
//                  --out docs --json]
// Every yardstick in one sitting, each in a fresh child process: throughput in memory and on disk with
// the run's SQLite commits beside it, open-loop latency, the durable runtime against durabletask-js
// (ours with replay sessions and replaying in full), the Supervisor's scan cost, the peak memory with
// the whole batch posted at once, as a ceiling as many demos as cores side by side, sharing nothing,
// the work each order costs on the laptop and on the Azure path, and sas host on the local durable
// engine against Microsoft's Durable Task extension, taking turns. Prints the figures beside their
// floors, writes the page and its JSON into --out, and exits 0 only when every yardstick ran and met
// its floor (1 otherwise, 2 on bad flags).
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { arch, availableParallelism, cpus, platform, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EMBEDDED_SYNCHRONOUS } from "../laptop/embedded/embedded-stack.js";
import { type BenchOptions, parseBenchOptions, USAGE, UsageError } from "./bench-options.js";
import {
  type Context,
  explainDemo,
  outcomeOf,
  RUNS_OF,
  type RunOutcome,
  type Runs,
  renderPage,
  renderTable,
  reportRows,
  summarise,
} from "./bench-report.js";
import { DEFAULT_WARMUP_SECONDS } from "./open-loop.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The page and its JSON: `<out>/<name>.md` and `<out>/<name>.json`. */
const PAGE_NAME = "benchmarks";

interface Plan {
  readonly title: string;
  /** The script and its arguments, run as `node [nodeFlags] --import tsx <args>`. */
  readonly args: readonly string[];
  readonly nodeFlags?: readonly string[];
  readonly timeoutSeconds: number;
  readonly explain?: (value: unknown) => string | undefined;
}

function plans(options: BenchOptions): Record<keyof Runs, Plan> {
  const demoTimeout = Math.max(300, Math.ceil(options.orders / 20));
  const demo = (where: string, data: readonly string[]): Plan => ({
    title: `demo, ${options.orders} orders, ${where}`,
    args: ["laptop/cli/main.ts", "demo", "--orders", String(options.orders), "--timeout", String(demoTimeout)]
      .concat(data)
      .concat("--json"),
    timeoutSeconds: demoTimeout + 120,
    explain: explainDemo,
  });
  return {
    demoDisk: demo("on disk", []),
    demoMemory: demo("in memory", ["--data", ":memory:"]),
    openLoop: {
      title: `open loop at ${options.rates.join(", ")} orders/s, ${DEFAULT_WARMUP_SECONDS} s of warm-up and ${options.seconds} s each`,
      args: ["bench/open-loop.ts", "--rates", options.rates.join(","), "--seconds", String(options.seconds)],
      timeoutSeconds: options.rates.length * (DEFAULT_WARMUP_SECONDS + options.seconds + 300 + 120),
    },
    runtime: runtime(false),
    runtimeFullReplay: runtime(true),
    supervisor: {
      title: "Supervisor scan",
      args: ["bench/supervisor.ts", "--sizes", "10000", "--stores", "sqlite,cosmos", "--json"],
      timeoutSeconds: 600,
    },
    sideBySide: {
      title: `${Math.max(2, availableParallelism())} demos of ${options.orders} orders side by side, in memory and on disk`,
      args: ["bench/side-by-side.ts", "--orders", String(options.orders), "--timeout", String(demoTimeout)],
      timeoutSeconds: 2 * demoTimeout + 240,
    },
    work: {
      title: `work per order: a demo of ${options.orders} orders on disk, ${options.azureOrders} orders through sas host`,
      args: [
        ...[
          "bench/work.ts",
          "--orders",
          String(options.orders),
          "--azure-orders",
          String(options.azureOrders),
        ],
        ...["--timeout", String(demoTimeout)],
      ],
      // The demo, building the app, and the Azure path's orders at no less than 2 a second.
      timeoutSeconds: demoTimeout + 300 + Math.max(180, Math.ceil(options.azureOrders / 2)),
    },
    engines: {
      title: `sas host on the local engine and on Microsoft's Durable Task extension, ${options.engineOrders} orders a run, ${options.engineRounds} run(s) each`,
      args: [
        "bench/engines.ts",
        "--orders",
        String(options.engineOrders),
        "--rounds",
        String(options.engineRounds),
      ],
      // The builds, then each run: starting, its orders at no less than 1 a second, the idle wait, stopping.
      timeoutSeconds: 600 + 2 * options.engineRounds * (Math.max(300, options.engineOrders) + 180),
    },
  };
}

/** `npm run bench:runtime`, ours with replay sessions (as the embedded host runs it) or replaying in full. */
function runtime(fullReplay: boolean): Plan {
  return {
    title: `runtime against durabletask-js, ours ${fullReplay ? "replaying every episode in full" : "with replay sessions"}`,
    args: ["bench/runtime.ts", "--json", ...(fullReplay ? ["--full-replay"] : [])],
    // It collects the heap before each run, so no run pays for the garbage of the one before.
    nodeFlags: ["--expose-gc"],
    timeoutSeconds: 600,
  };
}

/** The child process running now, stopped with its whole process group on Ctrl-C. */
let running: number | undefined;

function stopGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Runs one yardstick in a fresh process; its result is the last line it prints on stdout, as JSON. */
function run<T>(plan: Plan): Promise<RunOutcome<T>> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1_000;
  process.stderr.write(`bench: ${plan.title}...\n`);
  // Its own process group, so that a time limit or Ctrl-C stops it and whatever it started.
  const child = spawn(process.execPath, [...(plan.nodeFlags ?? []), "--import", "tsx", ...plan.args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  running = child.pid;
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8_000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) stopGroup(child.pid);
  }, plan.timeoutSeconds * 1_000);
  return new Promise((resolve) => {
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ ok: false, error: error.message, seconds: seconds() });
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      running = undefined;
      const outcome = outcomeOf<T>({ stdout, stderr, code, signal, timedOut }, seconds(), plan);
      process.stderr.write(
        `bench: ${plan.title}: ${outcome.ok ? "done" : `failed (${outcome.error})`} in ${outcome.seconds.toFixed(1)} s\n`,
      );
      resolve(outcome);
    });
  });
}

/** The commit the figures belong to, marked when the working tree differs from it. */
function commitMeasured(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
  try {
    const commit = git("rev-parse", "--short", "HEAD");
    return git("status", "--porcelain", "--untracked-files=no") === ""
      ? commit
      : `${commit} with uncommitted changes`;
  } catch {
    return "unknown (not a git checkout)";
  }
}

function context(args: readonly string[], seconds: number): Context {
  return {
    command: ["npm run bench", ...(args.length > 0 ? ["--", ...args] : [])].join(" "),
    commit: commitMeasured(),
    date: new Date().toISOString(),
    machine: {
      cpu: cpus()[0]?.model.trim() ?? "unknown",
      cores: availableParallelism(),
      memoryGb: Math.round(totalmem() / 2 ** 30),
      platform: `${platform()}/${arch()}`,
      node: process.version,
    },
    durability:
      `sas start and sas demo open SQLite in WAL mode with synchronous=${EMBEDDED_SYNCHRONOUS} ` +
      "(EMBEDDED_SYNCHRONOUS in laptop/embedded/embedded-stack.ts): a killed process loses no commit, a power " +
      'loss may lose the last few (docs/performance.md, "Durability"). Each row names the setting of its figure.',
    seconds,
  };
}

async function main(args: readonly string[]): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseBenchOptions(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  process.once("SIGINT", () => {
    if (running !== undefined) stopGroup(running);
    process.exit(130);
  });
  const started = performance.now();
  const planned = plans(options);
  const names = [...new Set(options.only.flatMap((yardstick) => RUNS_OF[yardstick]))];
  const runs: Record<string, RunOutcome<unknown>> = {};
  for (const name of (Object.keys(planned) as (keyof Runs)[]).filter((n) => names.includes(n))) {
    runs[name] = await run(planned[name]);
  }
  const rows = reportRows(options, runs as Runs);
  const summary = summarise(options, rows);
  const about = context(args, (performance.now() - started) / 1_000);
  const document = { ...about, options, runs, rows, summary };
  mkdirSync(options.out, { recursive: true });
  const page = join(options.out, `${PAGE_NAME}.md`);
  const json = join(options.out, `${PAGE_NAME}.json`);
  writeFileSync(page, renderPage(about, options, rows, summary, runs as Runs));
  writeFileSync(json, `${JSON.stringify(document, null, 2)}\n`);
  if (options.json) process.stdout.write(`${JSON.stringify(document)}\n`);
  else process.stdout.write(`\n${renderTable(options, rows, summary)}\nwrote ${page} and ${json}\n`);
  return summary.exitCode;
}

process.exitCode = await main(process.argv.slice(2));
