// tsx bench/side-by-side.ts [--orders 5000] [--processes <cores>] [--timeout 300]   (npm run bench runs it)
// How many orders a second this machine can process with the current build if its cores shared
// nothing: `sas demo` in several processes at once, each with its own database, partner and threads,
// in memory and then on disk. No coordination costs anything here, so no single host that splits its
// work over threads can do better on the same machine; a throughput floor above this figure needs
// less CPU per order, not more threads. Prints one JSON object.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { DemoSummary } from "../laptop/embedded/demo.js";
import { integer } from "./bench-options.js";
import { explainDemo, outcomeOf } from "./child-outcome.js";

const USAGE =
  "usage: tsx bench/side-by-side.ts [--orders <n>] [--processes <n>] [--timeout <s>]\n" +
  "  orders of each process 1 to 1000000 (default 5000), processes 2 to 64 (default: the cores),\n" +
  "  seconds each demo waits for its orders to settle, 1 to 86400 (default 300)";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface SideBySideRun {
  readonly ordersPerSecond: number;
  readonly cpuMsPerOrder: number;
  readonly from: string;
  readonly to: string;
}

export interface SideBySide {
  readonly where: "memory" | "disk";
  readonly processes: number;
  readonly ordersEach: number;
  readonly runs: readonly SideBySideRun[];
  /** Every process's orders over the span from the first one's first post to the last one's settling. */
  readonly combinedOrdersPerSecond: number;
  /**
   * The processes' own rates added up: what they would make together had they run exactly at once.
   * The span above can only understate it (they start apart, and one that has settled goes on to
   * check its invariants while the others still run); this can only overstate it.
   */
  readonly summedOrdersPerSecond: number;
}

/** The combined rate over the union of the runs' windows: overlapping badly can only lower it. */
export function combinedRate(
  ordersEach: number,
  runs: readonly Pick<SideBySideRun, "from" | "to">[],
): number {
  const from = Math.min(...runs.map((r) => Date.parse(r.from)));
  const to = Math.max(...runs.map((r) => Date.parse(r.to)));
  return to > from ? Math.round(((ordersEach * runs.length) / ((to - from) / 1_000)) * 10) / 10 : 0;
}

interface RunningDemo {
  readonly summary: Promise<DemoSummary>;
  /** Kills it if it still runs; resolves once it has exited. */
  stop(): Promise<void>;
}

/** A demo in a child process; its summary is the last line it prints. */
function demo(orders: number, data: string, timeoutSeconds: number): RunningDemo {
  const args = ["--import", "tsx", join(ROOT, "laptop/cli/main.ts"), "demo", "--orders", String(orders)];
  const child = spawn(
    process.execPath,
    [...args, "--data", data, "--timeout", String(timeoutSeconds), "--json"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const summary = new Promise<DemoSummary>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      // Read as npm run bench reads a yardstick's process: its last line as JSON, with exit 0 only.
      const exit = { stdout, stderr, code, signal, timedOut: false };
      const outcome = outcomeOf<DemoSummary>(exit, 0, { timeoutSeconds, explain: explainDemo });
      if (outcome.ok) resolve(outcome.value);
      else reject(new Error(`a demo failed: ${outcome.error}`));
    });
  });
  return {
    summary,
    stop: () => {
      child.kill("SIGKILL");
      return closed;
    },
  };
}

async function sideBySide(
  where: "memory" | "disk",
  options: { readonly processes: number; readonly orders: number; readonly timeoutSeconds: number },
): Promise<SideBySide> {
  const { processes, orders } = options;
  const dirs = Array.from({ length: where === "disk" ? processes : 0 }, () =>
    mkdtempSync(join(tmpdir(), "sas-sbs-")),
  );
  const demos = Array.from({ length: processes }, (_, i) =>
    demo(orders, where === "disk" ? (dirs[i] ?? "") : ":memory:", options.timeoutSeconds),
  );
  try {
    const summaries = await Promise.all(demos.map((d) => d.summary));
    const runs = summaries.map((s) => ({
      ordersPerSecond: s.throughput.ordersPerSecond,
      cpuMsPerOrder: s.cpu.msPerOrder,
      from: s.window.from,
      to: s.window.to,
    }));
    return {
      where,
      processes,
      ordersEach: orders,
      runs,
      combinedOrdersPerSecond: combinedRate(orders, runs),
      summedOrdersPerSecond: Math.round(runs.reduce((sum, r) => sum + r.ordersPerSecond, 0) * 10) / 10,
    };
  } finally {
    // One that failed leaves the others running: stop them before their directories go.
    await Promise.all(demos.map((d) => d.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

function options(): { orders: number; processes: number; timeoutSeconds: number } {
  try {
    const { values } = parseArgs({
      options: {
        orders: { type: "string", default: "5000" },
        processes: { type: "string", default: String(Math.max(2, availableParallelism())) },
        timeout: { type: "string", default: "300" },
      },
      strict: true,
      allowPositionals: false,
    });
    return {
      orders: integer("orders", values.orders, 1, 1_000_000),
      processes: integer("processes", values.processes, 2, 64),
      timeoutSeconds: integer("timeout", values.timeout, 1, 86_400),
    };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const chosen = options();
  const results: SideBySide[] = [];
  for (const where of ["memory", "disk"] as const) {
    console.error(`side by side: ${chosen.processes} demos of ${chosen.orders} orders at once, ${where}`);
    results.push(await sideBySide(where, chosen));
  }
  console.log(JSON.stringify({ results }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  });
}
