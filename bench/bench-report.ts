// What `npm run bench` makes of its yardsticks' child processes: each one's outcome, the rows with their
// floors and verdicts, the terminal table, the generated page and the exit code. bench.ts runs them.
import { readFileSync } from "node:fs";
import type { DemoSummary } from "../laptop/embedded/demo.js";
import type { BenchOptions, Yardstick } from "./bench-options.js";
import type { RunOutcome } from "./child-outcome.js";
import type { EnginesResult } from "./engines.js";
import { ENGINES_DURABILITY, engineLines } from "./engines-report.js";
import type { RateResult } from "./open-loop.js";
import type { SideBySide } from "./side-by-side.js";
import type { WorkResult } from "./work.js";
import { capacityLines, workLines } from "./work-report.js";

export { type ChildExit, explainDemo, outcomeOf, type RunOutcome } from "./child-outcome.js";

/** The page's account of how each figure is measured, kept as Markdown beside this file. */
const WHAT_EACH_FIGURE_IS = readFileSync(new URL("./what-each-figure-is.md", import.meta.url), "utf8");

export interface RuntimeResult {
  readonly instances: number;
  /** Ours as the embedded host runs it (sessions kept between episodes), or replaying every episode. */
  readonly replaySessions?: boolean;
  /** How the runtime's file was opened. */
  readonly file: string;
  readonly scenarios: readonly {
    readonly scenario: string;
    readonly label: string;
    readonly ours: { readonly memory: number; readonly file: number };
    readonly theirs: number;
    readonly ratio: number;
  }[];
}

export interface SupervisorResult {
  readonly pageSize: number;
  readonly expired: number;
  readonly inFlight: number;
  readonly rows: readonly {
    readonly store: string;
    readonly size: number;
    readonly scan: {
      readonly found: number;
      readonly documentsRead: number;
      readonly requestUnits: number;
      readonly ms: number;
    };
  }[];
}

export interface OpenLoopResult {
  readonly durability: string;
  readonly rates: readonly RateResult[];
}

/** The child processes' outcomes; the memory yardstick reads the on-disk demo run. */
export interface Runs {
  readonly demoDisk?: RunOutcome<DemoSummary>;
  readonly demoMemory?: RunOutcome<DemoSummary>;
  readonly openLoop?: RunOutcome<OpenLoopResult>;
  readonly runtime?: RunOutcome<RuntimeResult>;
  /** The same, ours replaying every episode in full, as the peer does. */
  readonly runtimeFullReplay?: RunOutcome<RuntimeResult>;
  readonly supervisor?: RunOutcome<SupervisorResult>;
  readonly sideBySide?: RunOutcome<{ readonly results: readonly SideBySide[] }>;
  readonly work?: RunOutcome<WorkResult>;
  readonly engines?: RunOutcome<EnginesResult>;
}

/** The runs each yardstick reads. */
export const RUNS_OF: Record<Yardstick, readonly (keyof Runs)[]> = {
  throughput: ["demoDisk", "demoMemory"],
  latency: ["openLoop"],
  runtime: ["runtime", "runtimeFullReplay"],
  supervisor: ["supervisor"],
  memory: ["demoDisk"],
  ceiling: ["sideBySide"],
  work: ["work"],
  engines: ["engines"],
};

/**
 * The floors the figures are held to. Throughput has none: the work each order costs is what a build
 * is judged by (the work yardstick, and `npm run bench:compare` against an earlier build).
 */
export const FLOORS = {
  /** The size the memory floor is set for. */
  orders: 5_000,
  latencyRate: 200,
  latencyP99Ms: 250,
  runtimeRatio: 1,
  /** Strictly below. */
  peakRssMb: 600,
} as const;

/**
 * pass: met its floor; missed: did not; failed: its run failed; not run: the machine lacks what the
 * yardstick needs (a .NET SDK for the engines), which fails nothing; "": a figure with no floor.
 */
export type Verdict = "pass" | "missed" | "failed" | "not run" | "";

export interface Row {
  readonly yardstick: Yardstick;
  readonly figure: string;
  readonly value: string;
  readonly floor: string;
  readonly verdict: Verdict;
  readonly durability: string;
}

export interface Summary {
  /** Runs that failed, each with its error. */
  readonly failed: readonly string[];
  /** Figures below their floor. */
  readonly missed: readonly string[];
  /** Floors this run could not check, and why. */
  readonly notChecked: readonly string[];
  readonly exitCode: 0 | 1;
}

const IN_MEMORY = "in memory: nothing survives the process";

export function reportRows(options: BenchOptions, runs: Runs): Row[] {
  const rows: Row[] = [];
  for (const yardstick of options.only) {
    for (const name of RUNS_OF[yardstick]) {
      const outcome = runs[name];
      if (outcome === undefined || outcome.ok) continue;
      rows.push(rowMaker(yardstick, "")(RUN_TITLES[name](options), outcome.error, "", "failed"));
    }
    rows.push(...FIGURES[yardstick](options, runs));
  }
  return rows;
}

const RUN_TITLES: Record<keyof Runs, (options: BenchOptions) => string> = {
  demoDisk: (o) => `demo, ${count(o.orders)} orders, on disk: run failed`,
  demoMemory: (o) => `demo, ${count(o.orders)} orders, in memory: run failed`,
  openLoop: (o) => `open loop at ${o.rates.join(", ")} orders/s: run failed`,
  runtime: () => "runtime against durabletask-js: run failed",
  runtimeFullReplay: () => "runtime against durabletask-js, ours replaying in full: run failed",
  supervisor: () => "Supervisor scan: run failed",
  sideBySide: () => "demos side by side: run failed",
  work: (o) =>
    `work per order (${count(o.orders)} orders embedded, ${count(o.azureOrders)} on the Azure path): run failed`,
  engines: (o) => `sas host on both engines, ${count(o.engineOrders)} orders a run: run failed`,
};

type Figures = (options: BenchOptions, runs: Runs) => Row[];

const FIGURES: Record<Yardstick, Figures> = {
  throughput: (options, runs) => [
    ...demoFigures(options, runs.demoDisk, "on disk"),
    ...demoFigures(options, runs.demoMemory, "in memory"),
  ],
  latency: (_, runs) =>
    (succeeded(runs.openLoop) ?? { rates: [] }).rates.flatMap((r) => rateFigures(r, runs)),
  runtime: (_, runs) => [
    ...runtimeFigures(succeeded(runs.runtime), true),
    ...runtimeFigures(succeeded(runs.runtimeFullReplay), false),
  ],
  supervisor: (_, runs) => {
    const result = succeeded(runs.supervisor);
    return (result?.rows ?? []).map((r) =>
      rowMaker(
        "supervisor",
        r.store === "cosmos"
          ? "Cosmos DB stand-in, in memory, 1 RU a request"
          : "a file (the scan only reads)",
      )(
        `${r.store}, ${count(r.size)} records, ${r.scan.found} expired`,
        `${count(r.scan.documentsRead)} documents${r.store === "cosmos" ? `, ${count(r.scan.requestUnits)} RU` : ""}, ${r.scan.ms.toFixed(1)} ms a scan`,
      ),
    );
  },
  ceiling: (_, runs) => ceilingFigures(runs),
  work: (_, runs) => {
    const work = succeeded(runs.work);
    if (!work) return [];
    return workLines(work).map((line) => rowMaker("work", line.durability)(line.figure, line.value));
  },
  engines: (_, runs) => {
    const result = succeeded(runs.engines);
    if (!result) return [];
    return engineLines(result).map((line) =>
      rowMaker("engines", ENGINES_DURABILITY)(line.figure, line.value, line.floor, line.verdict),
    );
  },
  memory: (options, runs) => {
    const demo = succeeded(runs.demoDisk);
    if (!demo) return [];
    return [
      rowMaker("memory", durabilityOf(demo))(
        `peak RSS, ${count(options.orders)} orders posted at once`,
        `${count(demo.peakRssMb)} MB (${count(demo.submission.unsettledWhenPosted)} unsettled when the last was posted)`,
        `< ${count(FLOORS.peakRssMb)} MB`,
        verdictOf(demo.peakRssMb < FLOORS.peakRssMb),
      ),
    ];
  },
};

/** The side-by-side runs: what this machine does with every core to itself, a ceiling for the demo's figures. */
function ceilingFigures(runs: Runs): Row[] {
  return (succeeded(runs.sideBySide)?.results ?? []).map((result) =>
    rowMaker("ceiling", result.where === "memory" ? IN_MEMORY : "file, WAL, each process its own")(
      `${result.processes} demos of ${count(result.ordersEach)} side by side, sharing nothing, ${result.where === "memory" ? "in memory" : "on disk"}`,
      `${decimal(result.combinedOrdersPerSecond)} orders/s together, ${decimal(result.summedOrdersPerSecond)} as the sum of their rates ` +
        `(each ${result.runs.map((r) => decimal(r.ordersPerSecond)).join(" / ")}; CPU ${result.runs
          .map((r) => r.cpuMsPerOrder.toFixed(2))
          .join(" / ")} ms an order)`,
    ),
  );
}

/**
 * Ours against durabletask-js: with replay sessions, as the embedded host runs it, held to its floor;
 * replaying every episode in full, as the peer does, for information.
 */
function runtimeFigures(result: RuntimeResult | undefined, sessions: boolean): Row[] {
  if (!result) return [];
  const row = rowMaker(
    "runtime",
    `in memory, both engines; ours ${sessions ? "with replay sessions" : "replaying every episode in full"}`,
  );
  const ours = sessions ? "ours" : "ours, full replay,";
  return [
    ...result.scenarios.map((s) =>
      row(
        `${s.label}: ${ours} / durabletask-js`,
        `${s.ratio.toFixed(2)} (${count(s.ours.memory)} / ${count(s.theirs)} orchestrations/s)`,
        sessions ? `≥ ${FLOORS.runtimeRatio.toFixed(2)}` : "",
        sessions ? verdictOf(s.ratio >= FLOORS.runtimeRatio) : "",
      ),
    ),
    rowMaker("runtime", `file, ${result.file}`)(
      `  ${sessions ? "ours" : "ours, full replay,"} on a file, same scenarios`,
      `${result.scenarios.map((s) => count(s.ours.file)).join(" and ")} orchestrations/s`,
    ),
  ];
}

function demoFigures(
  options: BenchOptions,
  outcome: RunOutcome<DemoSummary> | undefined,
  where: string,
): Row[] {
  const demo = succeeded(outcome);
  if (!demo) return [];
  const { storage } = demo;
  const row = rowMaker("throughput", durabilityOf(demo));
  const ordersPerSecond = demo.throughput.ordersPerSecond;
  return [
    row(`demo, ${count(options.orders)} orders, ${where}`, `${decimal(ordersPerSecond)} orders/s`),
    row(
      "  SQLite commits in that run",
      storage.commits === null || storage.commitsPerSecond === null
        ? "not counted: no WAL in memory"
        : `${count(storage.commitsPerSecond)} commits/s (${decimal(storage.commits / options.orders)} an order)`,
    ),
    row("  rows written in that run", `${count(storage.rowsWrittenPerSecond)} rows/s`),
    row("  single-row commits, same settings", `${count(storage.singleRowCommitsPerSecond)} commits/s`),
    row(
      "  CPU per order, every thread",
      `${demo.cpu.msPerOrder.toFixed(2)} ms (${demo.cpu.coresBusy.toFixed(2)} cores busy); ` +
        `${demo.cpu.cores} cores doing nothing else: at most ${count((demo.cpu.cores * 1_000) / demo.cpu.msPerOrder)} orders/s`,
    ),
  ];
}

function rateFigures(result: RateResult, runs: Runs): Row[] {
  const row = rowMaker("latency", succeeded(runs.openLoop)?.durability ?? "");
  const { latencyMs: latency } = result;
  const checked = result.rate === FLOORS.latencyRate;
  const met = latency.count > 0 && latency.p99 !== null && latency.p99 <= FLOORS.latencyP99Ms;
  const notProcessed = result.accepted - (result.outcomes.Processed ?? 0);
  return [
    row(
      `open loop at ${count(result.rate)}/s: p50 / p99 / max`,
      latency.count === 0
        ? "no order accepted"
        : `${[latency.p50, latency.p99, latency.max].map(milliseconds).join(" / ")} ms`,
      checked ? `p99 ≤ ${FLOORS.latencyP99Ms} ms` : "",
      checked ? verdictOf(met) : "",
    ),
    row(
      `  first ${result.warmup.seconds} s before it (warm-up, not counted): p50 / p99 / max`,
      result.warmup.latencyMs.count === 0
        ? "no order accepted"
        : `${[result.warmup.latencyMs.p50, result.warmup.latencyMs.p99, result.warmup.latencyMs.max].map(milliseconds).join(" / ")} ms (${count(result.warmup.accepted)} of ${count(result.warmup.sent)} accepted)`,
    ),
    row(
      "  sent / accepted / refused / errors",
      `${[result.sent, result.accepted, result.refused, result.errors].map(count).join(" / ")}, ` +
        `sent at ${decimal(result.achievedRate)}/s, p99 ${decimal(result.sendLagMs.p99 ?? 0)} ms behind schedule` +
        (notProcessed > 0 ? `; ${count(notProcessed)} accepted never Processed` : ""),
    ),
  ];
}

/** The verdict over all rows: exit 0 only when every run succeeded and every figure checked met its floor. */
export function summarise(options: BenchOptions, rows: readonly Row[]): Summary {
  const failed = rows.filter((r) => r.verdict === "failed").map((r) => `${r.figure}: ${r.value}`);
  const missed = rows
    .filter((r) => r.verdict === "missed")
    .map((r) => `${r.figure.trim()}: ${r.value}, floor ${r.floor}`);
  const notChecked: string[] = rows
    .filter((r) => r.verdict === "not run")
    .map((r) => `${r.figure.trim()}: ${r.value}`);
  const skipped = (yardstick: Yardstick, floor: string) => {
    if (!options.only.includes(yardstick)) notChecked.push(`${floor}: not run (--only)`);
  };
  skipped("latency", `open loop at ${FLOORS.latencyRate}/s p99 ≤ ${FLOORS.latencyP99Ms} ms`);
  if (options.only.includes("latency") && !options.rates.includes(FLOORS.latencyRate)) {
    notChecked.push(
      `open loop at ${FLOORS.latencyRate}/s p99 ≤ ${FLOORS.latencyP99Ms} ms: ${FLOORS.latencyRate} is not among --rates`,
    );
  }
  skipped("runtime", `runtime ours / durabletask-js ≥ ${FLOORS.runtimeRatio.toFixed(2)}`);
  skipped("memory", `peak RSS < ${FLOORS.peakRssMb} MB`);
  return { failed, missed, notChecked, exitCode: failed.length + missed.length === 0 ? 0 : 1 };
}

/** The terminal's account: the table, then the verdict in words. */
export function renderTable(options: BenchOptions, rows: readonly Row[], summary: Summary): string {
  const table = [
    ["yardstick", "figure", "value", "floor", "verdict", "durability"],
    ...rows.map((r) => [r.yardstick, r.figure, shorten(r.value), r.floor, r.verdict, r.durability]),
  ];
  const widths = (table[0] ?? []).map((_, i) => Math.max(...table.map((line) => line[i]?.length ?? 0)));
  const lines = table.map((line) =>
    line
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
  const { groups, last } = verdict(options, summary);
  const words = groups.flatMap((group) => [group.title, ...group.items.map((item) => `  ${item}`)]);
  return [...lines, "", ...words, last].join("\n");
}

interface VerdictGroup {
  readonly title: string;
  readonly items: readonly string[];
}

/** The verdict in words: groups of items (failed runs, missed floors, floors not checked), then a last line. */
function verdict(options: BenchOptions, summary: Summary): { groups: VerdictGroup[]; last: string } {
  const groups = [
    { title: `${summary.failed.length} run(s) failed:`, items: summary.failed },
    { title: `${summary.missed.length} figure(s) below their floor:`, items: summary.missed },
    { title: "floors not checked:", items: summary.notChecked },
  ].filter((group) => group.items.length > 0);
  if (options.orders !== FLOORS.orders && options.only.includes("memory")) {
    groups.push({
      title: "note:",
      items: [
        `the memory floor is set for ${count(FLOORS.orders)} orders; this run used ${count(options.orders)}`,
      ],
    });
  }
  const last =
    summary.exitCode === 0
      ? "every yardstick run met its floor: exit 0"
      : "not every yardstick ran and met its floor: exit 1";
  return { groups, last };
}

export interface Context {
  /** The command as it was given. */
  readonly command: string;
  /** The commit measured (short hash), and whether the working tree differed from it. */
  readonly commit: string;
  /** ISO 8601. */
  readonly date: string;
  readonly machine: {
    readonly cpu: string;
    readonly cores: number;
    readonly memoryGb: number;
    readonly platform: string;
    readonly node: string;
  };
  /** The embedded host's durability setting, in words. */
  readonly durability: string;
  readonly seconds: number;
}

/** The generated page; the capacity and cost table comes from the work yardstick's run, when it ran. */
export function renderPage(
  context: Context,
  options: BenchOptions,
  rows: readonly Row[],
  summary: Summary,
  runs: Runs = {},
): string {
  const { machine } = context;
  const { groups, last } = verdict(options, summary);
  const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
  const table = [
    "| yardstick | figure | value | floor | verdict | durability |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${[r.yardstick, r.figure.trim(), r.value, r.floor, r.verdict ? `**${r.verdict}**` : "", r.durability].map(cell).join(" | ")} |`,
    ),
  ];
  return [
    "# Benchmarks",
    "",
    `Generated by \`${context.command}\` (\`bench/bench.ts\`) at commit ${context.commit} on ${context.date}, in ${Math.round(context.seconds)} s;`,
    "the same figures are in the JSON file beside this page. Do not edit by hand: run the command again.",
    "",
    `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.platform}`,
    `- Node: ${machine.node}`,
    `- Durability: ${context.durability}`,
    "",
    ...table,
    "",
    ...groups.flatMap((group) => [
      `**${group.title}**`,
      "",
      ...group.items.map((item) => `- ${cell(item)}`),
      "",
    ]),
    `**${last}**`,
    "",
    ...capacitySection(runs, cell),
    WHAT_EACH_FIGURE_IS,
  ].join("\n");
}

/** Azure's capacity and cost at this build's work per order: the work yardstick's Azure-path run. */
function capacitySection(runs: Runs, cell: (text: string) => string): string[] {
  const work = succeeded(runs.work);
  if (!work) return [];
  return [
    "## Capacity and cost in Azure",
    "",
    `From the work yardstick's run of ${count(work.azure.orders)} orders through \`sas host\` (below, "Work per order"):`,
    "Cosmos DB request units are an estimate from Microsoft's published cost model, not a measurement.",
    "",
    "| figure | value |",
    "| --- | --- |",
    ...capacityLines(work.azure).map((line) => `| ${cell(line.figure)} | ${cell(line.value)} |`),
    "",
  ];
}

/** Rows of one yardstick at one durability; a figure with a floor gives it and its verdict. */
function rowMaker(yardstick: Yardstick, durability: string) {
  return (figure: string, value: string, floor = "", verdict: Verdict = ""): Row => ({
    yardstick,
    figure,
    value,
    floor,
    verdict,
    durability,
  });
}

function verdictOf(met: boolean): Verdict {
  return met ? "pass" : "missed";
}

function succeeded<T>(outcome: RunOutcome<T> | undefined): T | undefined {
  return outcome?.ok ? outcome.value : undefined;
}

function durabilityOf(demo: DemoSummary): string {
  const { storage } = demo;
  return storage.database === "memory"
    ? IN_MEMORY
    : `file, ${storage.journalMode.toUpperCase()}, synchronous=${storage.synchronous}`;
}

function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

function decimal(n: number): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
}

/** Milliseconds to the nearest one; null (an order that never got there) is ∞. */
function milliseconds(n: number | null): string {
  return n === null || !Number.isFinite(n) ? "∞" : count(n);
}

function shorten(text: string, max = 120): string {
  const line = text.replaceAll("\n", " ");
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}
