// What `npm run bench` makes of its yardsticks' child processes: each one's outcome, the rows with their
// floors and verdicts, the terminal table, the generated page and the exit code. Pure: bench.ts runs them.
import type { DemoSummary } from "../laptop/embedded/demo.js";
import type { BenchOptions, Yardstick } from "./bench-options.js";
import type { EnginesResult } from "./engines.js";
import { ENGINES_DURABILITY, engineLines } from "./engines-report.js";
import type { RateResult } from "./open-loop.js";
import type { SideBySide } from "./side-by-side.js";
import type { WorkResult } from "./work.js";
import { capacityLines, workLines } from "./work-report.js";

/** A child process's result, or why there is none; `seconds` is how long it ran either way. */
export type RunOutcome<T> =
  | { readonly ok: true; readonly value: T; readonly seconds: number }
  | { readonly ok: false; readonly error: string; readonly seconds: number };

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

export interface ChildExit {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
}

/**
 * A child's outcome from how it ended: its result is the last line of its stdout, as JSON, and counts
 * only with exit 0; otherwise the reason is the child's own (`explain` reads its result), else the
 * first line of its stderr naming an error, else its last.
 */
export function outcomeOf<T>(
  exit: ChildExit,
  seconds: number,
  plan: {
    readonly timeoutSeconds: number;
    /** Why a run that printed its result still exited non-zero, when the result can say. */
    readonly explain?: (value: unknown) => string | undefined;
  },
): RunOutcome<T> {
  const last = exit.stdout.trim().split("\n").pop() ?? "";
  let value: unknown;
  try {
    value = JSON.parse(last);
  } catch {
    value = undefined;
  }
  if (exit.timedOut)
    return { ok: false, error: `stopped after its limit of ${plan.timeoutSeconds} s`, seconds };
  if (exit.code === 0 && value !== undefined) return { ok: true, value: value as T, seconds };
  const why =
    (value !== undefined ? plan.explain?.(value) : undefined) ??
    firstErrorLine(exit.stderr) ??
    (value === undefined ? "printed no JSON result" : "no reason given");
  return { ok: false, error: `exit ${exit.code ?? exit.signal}: ${why}`, seconds };
}

/** The line of a child's stderr that says what went wrong: the first naming an error, else the last. */
function firstErrorLine(stderr: string): string | undefined {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return (lines.find((line) => /error/i.test(line)) ?? lines[lines.length - 1])?.slice(0, 300);
}

/** Why `sas demo` exited 1 although it printed its summary: broken invariants, or orders left unsettled. */
export function explainDemo(value: unknown): string | undefined {
  const demo = value as {
    invariants?: { violations?: string[] };
    orders?: Record<string, number>;
  };
  const violations = demo.invariants?.violations ?? [];
  const { Pending = 0, Processing = 0, Compensating = 0 } = demo.orders ?? {};
  const unsettled = Pending + Processing + Compensating;
  const reasons = [
    ...(violations.length > 0 ? [`invariants broken: ${violations.slice(0, 2).join("; ")}`] : []),
    ...(unsettled > 0 ? [`${unsettled} orders unsettled at the timeout`] : []),
  ];
  return reasons.length > 0 ? reasons.join("; ") : undefined;
}

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

/** The page's account of how each figure is measured. */
export const WHAT_EACH_FIGURE_IS = `## What each figure is

Each yardstick runs in a process of its own, one after another (the ceiling's demos start together,
each in a process of its own).

- **Throughput**: \`sas demo --orders N --json\` (no partner faults), on disk in a fresh temporary
  directory and with \`--data :memory:\`: the orders divided by the seconds from the first post to the
  moment every order was settled. The demo checks its invariants; a run that breaks one, or leaves an
  order unsettled, counts as failed. Throughput has no floor: it says as much about the machine that
  day as about the build, which is judged instead by the work each order costs (below, and
  \`npm run bench:compare\` against an earlier build in one sitting).
- **SQLite commits in that run**: write transactions committed to the run's WAL over the same
  seconds, by every part of the pipeline, read from the change counter SQLite keeps in the WAL index
  (the \`-shm\` file) before and after: one per transaction that wrote, none for one that only read.
  An in-memory database has no WAL, so there they are not counted. **Rows written**: SQLite's
  \`total_changes()\` over the same seconds, the rows of the demo's audit trigger (one per record
  write, for the invariant checks; the host has no such trigger) included.
- **Single-row commits, same settings**: once the batch has settled, one-row inserts, each its own
  transaction, into a tiny table of a fresh database beside the run's, opened as the host opens its
  own (WAL, the same \`synchronous\`, checkpoints on a worker thread), for at least 0.3 s: how fast
  SQLite commits on this machine, for scale.
- **CPU per order, every thread**: the demo process's CPU time (\`process.cpuUsage()\`: user and
  system, the main thread, the partner's, the checkpoint thread and Node's own) over the same seconds,
  divided by the orders; "cores busy" is that time over the seconds. The cores of the machine over that
  time per order is the most this build could do if the machine ran nothing else and every core were
  busy with orders.
- **Open loop**: for each rate, a fresh \`sas start\` in a child process (data in a temporary
  directory, no demo batch, partner faults off), and \`bench/open-loop.ts\` in another process posting
  orders to \`POST /api/orders\` on a fixed schedule, order i at t0 + i/rate, over keep-alive
  connections, never waiting for an answer before the next: first for 10 s of warm-up, then, on the
  same schedule without a pause, for the measured seconds. A freshly started host is slow for its
  first seconds (the JIT compiling, connections to the partner opening, caches filling): at 200
  orders/s a backlog forms that the host takes a few more seconds to clear, and with 5 s of warm-up
  that backlog alone made the p99 of the measured 20 s in some runs (1.9 s in one, 43 ms in the
  next). The warm-up's latencies are shown on a row of their own and count toward no floor. Once every accepted order is terminal (at most 300 s), each record is read:
  latency is the time of its history's entry into \`Processed\` minus the time its POST was sent, on
  the same clock. An accepted order that never reached
  \`Processed\` counts as infinitely late (∞). Refused: answered 429 (the backlog of \`Pending\` orders
  at \`MAX_PENDING\`); errors: any other answer, or none. The send rate is the one achieved.
- **Runtime**: \`npm run bench:runtime -- --json\`, 500 instances of each scenario started at once:
  completed orchestrations per second on the local durable runtime with SQLite in memory, with replay
  sessions as the embedded host runs it, against the in-memory test backend of
  \`@microsoft/durabletask-js\` in the same process; the floor holds these. Then the same with
  \`--full-replay\`: ours replaying every episode from the start of its history, as the peer always
  does, shown for a like-for-like comparison and held to no floor. Each figure is the
  median of three runs, the engines taking turns, after one unmeasured run of each; every run starts
  from a collected heap (the process runs with \`--expose-gc\`), so none pays for the garbage of the
  run before it, which had swung the event-vs-timer ratio between 0.5 and 1.0 from run to run.
- **Supervisor scan**: \`npm run bench:supervisor -- --sizes 10000 --stores sqlite,cosmos --json\`: one
  scan as the Supervisor scans (the expired query, paged) over 10,000 records of which 100 have
  expired and 200 are in flight: the documents read, the request units (Cosmos DB), and the median
  time of 9 scans. The Cosmos DB figures come from the in-memory stand-in, which charges 1 RU a
  request and has no indexes.
- **Side by side**: \`bench/side-by-side.ts\`: as many \`sas demo --orders N --json\` processes as
  the machine has cores (at least two), started together, each with its own database, partner and
  threads, first all in memory, then all on disk. "Together" is every process's orders over the span
  from the first one's first post to the last one's settling, which can only understate what they did
  at once (they start apart, and one that has settled goes on to check its invariants); the sum of
  their own rates can only overstate it. Nothing is shared, so nothing is paid for coordination: a host
  that spreads its work over threads or processes cannot do better on this machine with this build.
  More throughput than this takes less CPU per order.
- **Memory**: the peak resident set size (\`process.resourceUsage().maxRSS\`: the main thread, the
  partner's and the checkpoint thread together) of the on-disk throughput run, whose whole batch is
  posted in one burst (the figure says how many orders were not yet settled when the last was posted).
- **Work per order** (\`bench/work.ts\`): counts, not times, so they hold whatever the machine's speed.
  *Embedded host*: \`sas demo --orders N --data <dir> --json\` on disk, then its SQLite file read
  (\`bench/work-counts.ts\`): activities (TaskScheduled events), durable timers (TimerCreated
  events) and orchestration episodes (one \`df_history\` row each) per order; the history's events
  and bytes (its JSON text); state-record writes (the demo's audit rows, one per write, the create
  included); the partner's calls as the demo counts them; and SQLite's rows written over the run.
  *Azure path*: this checkout's Azure Functions app, built as \`npm run build\` builds it, run by
  \`sas host\` in a child process with Agents called from activities (\`AGENT_MODE=activity\`) and the
  starter and Supervisor timers on the deployment's schedule (every 5 minutes; the starter is nudged
  by each submission, not polled); \`sas send\` puts the orders on the orders queue. Cosmos DB and
  Service Bus are stand-ins the bench starts itself and \`sas host\` uses as it finds them: the
  \`@vercel/cosmosdb-server\` stand-in, every request it answers classified from its REST call
  (point read, create, replace, upsert, patch, batch, delete, query) by container (\`records\`, the
  state container; \`recovery\`, the Supervisor's recovery index), a refused one (412 on a stale
  ETag, 404, 409) counted apart with its status, metadata requests left out of the per-container
  figures; and the broker stand-in, each queue's messages sent, delivered under a lock, completed,
  abandoned and dead-lettered, its lock renewals and peek requests. What the host did before the first
  order was sent is not counted. The run ends once every record is final and the durable runtime has
  nothing left to do; then the host is stopped, and its durable store (\`durable.db\`) is read as the
  demo's is, and the simulated partner's ledger gives its calls. State-record writes on this path are
  the successful writes to the state container (a batch, which writes a record with its tombstone,
  counts once); bytes written are the documents' JSON as sent.
  *Request units* are an estimate from Microsoft's published cost model ("Understand request units
  consumption", learn.microsoft.com/azure/cosmos-db/understand-request-unit-consumption; "Optimize
  request cost", learn.microsoft.com/azure/cosmos-db/optimize-cost-reads-writes), never a
  measurement (the stand-in charges 1 RU a request and has no indexes): a point read by the item's
  size (1 RU up to 1 KB); a create by its size (about 5 RU at 1 KB) plus 0.2 RU per index term the
  container's indexing policy (as the app created the container) gives the document; a replace or an
  upsert of an existing item twice the size-based charge plus 0.2 RU per index term removed or
  added; a patch as a replace plus 0.4 RU per operation; a delete as a create; a query 1.8 RU plus a
  point read of each item it returns (fitted to the published sample, 3.19 RU for one item of 9,963
  bytes, and about 1,000 RU for 1,000 items of 1 KB); a refused request as a 1 KB point read, and
  metadata nothing (both assumptions). One region, session consistency; the service's own charges
  vary with its version, the document's stored size and the query's plan.
- **Engines** (\`bench/engines.ts\`): the built app under \`sas host\` on the local durable engine and
  on Microsoft's Durable Task extension, taking turns (local, extension, local, extension by default),
  each run on fresh data, free ports and stand-ins of its own, \`sas send\` putting the orders on the
  orders queue; timed from the start of \`sas send\` (its own start-up included) until every record is
  final. Orders per second; CPU per order
  from \`/proc\` over those seconds, \`sas host\` with what it started (the .NET extension host) apart
  from the stand-ins (Azurite's process; the bench's own process, which holds the broker, the Cosmos DB
  stand-in, the partner and the proxy); history rows per order (the task hub's \`History\` table, one
  row an event; the local store's \`df_history\`, one row an episode); each effect applied once at the
  partner, in every run (the one floor); and the requests Azurite served over those seconds, counted by
  a proxy in front of its blob, queue and table services: each is a billed storage transaction in Azure.
  Each figure is the median of the engine's runs. Without a .NET SDK 8 or later the yardstick is
  reported as not run, with the reason, and fails nothing.
- **Capacity and cost in Azure**: the Azure path's figures per 1,000 orders, and the orders per second
  that 1,000 RU/s of provisioned throughput sustains at the estimated request units per order. Work
  that depends on time rather than orders (the Supervisor's scans, retention) is in these figures only
  as far as it happened during the run.
`;

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
