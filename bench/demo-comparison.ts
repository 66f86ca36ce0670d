/**
 * Two builds compared on the whole demo: each run's figures (CPU and rate, and the work each order
 * cost, on the laptop and on the Azure path), the order the runs are made in, and the issue's targets
 * for the ratios. The running itself is `demo-compare.ts`'s.
 */
import { compareRuns, type FigureComparison, type Figures } from "./runtime-comparison.js";
import type { ThreadCpu } from "./thread-cpu.js";
import { type DurableWork, perOrder } from "./work-counts.js";

export const STORAGE_KINDS = ["memory", "disk"] as const;
export type StorageKind = (typeof STORAGE_KINDS)[number];

/** The base build, or this one. */
export type Build = "base" | "head";

/** What a `demo --json` summary holds, as far as a comparison reads it (both builds print these). */
export interface DemoSummaryRead {
  readonly orders: { readonly submitted: number };
  readonly partner: { readonly calls: number };
  readonly throughput: { readonly ordersPerSecond: number };
  readonly cpu: { readonly msPerOrder: number };
  readonly storage: { readonly rowsWritten: number };
  /** The measured seconds, wall clock (ISO instants); the CPU per order is over these. */
  readonly window?: { readonly from: string; readonly to: string };
}

/** What `measureAzureWork` returns (bench/azure-work.ts), as far as a comparison reads it. */
export interface AzureWorkRead {
  readonly orders: number;
  readonly seconds: number;
  readonly cosmos: {
    readonly byKind: Readonly<Record<string, number>>;
    readonly requests: number;
    readonly requestUnitsEstimate: number;
  };
  readonly serviceBus: {
    readonly byKind: Readonly<Record<string, number>>;
    readonly operations: number;
  } | null;
  readonly durable: DurableWork | null;
  readonly partnerCalls: number | null;
}

/** Which build runs first in each pair alternates, so neither always runs on the machine the other warmed. */
export function pairOrder(pair: number): readonly [Build, Build] {
  return pair % 2 === 0 ? ["base", "head"] : ["head", "base"];
}

export interface Sitting<T> {
  readonly base: T[];
  readonly head: T[];
  /** The run that failed and ended the sitting, if one did; the pairs made before it stand. */
  readonly failure?: Error;
}

/**
 * `pairs` pairs of runs, alternated; a failed run ends the sitting, and a pair it left half made is
 * dropped so that the i-th runs of each build stay a pair.
 */
export async function alternate<T>(
  pairs: number,
  run: (build: Build) => T | Promise<T>,
  onPair: (done: number) => void = () => {},
): Promise<Sitting<T>> {
  const base: T[] = [];
  const head: T[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const made: Partial<Record<Build, T>> = {};
    try {
      for (const build of pairOrder(pair)) made[build] = await run(build);
    } catch (error) {
      return { base, head, failure: error instanceof Error ? error : new Error(String(error)) };
    }
    if (made.base === undefined || made.head === undefined) throw new Error("a pair was left unmade");
    base.push(made.base);
    head.push(made.head);
    onPair(pair + 1);
  }
  return { base, head };
}

/** The summary a demo printed as its last line of output; undefined if there is none. */
export function demoSummaryFromOutput(stdout: string): DemoSummaryRead | undefined {
  const lastLine = stdout.trim().split("\n").at(-1) ?? "";
  if (!lastLine.startsWith("{")) return undefined;
  try {
    const printed = JSON.parse(lastLine) as Partial<DemoSummaryRead>;
    const complete =
      typeof printed.orders?.submitted === "number" &&
      typeof printed.partner?.calls === "number" &&
      typeof printed.throughput?.ordersPerSecond === "number" &&
      typeof printed.cpu?.msPerOrder === "number" &&
      typeof printed.storage?.rowsWritten === "number";
    return complete ? (printed as DemoSummaryRead) : undefined;
  } catch {
    return undefined;
  }
}

const WORK_LABELS: Readonly<Record<string, string>> = {
  instances: "orchestrations",
  episodes: "episodes",
  historyEvents: "history events",
  historyBytes: "history bytes",
  activities: "activities",
  timers: "timers",
  stateWrites: "state-record writes",
};

function durableFigures(section: string, work: DurableWork, orders: number): Figures {
  const figures: Record<string, number> = {};
  for (const [name, value] of Object.entries(perOrder(work, orders))) {
    figures[`${section}, ${WORK_LABELS[name] ?? name} per order`] = value;
  }
  return figures;
}

/** One demo run's figures; `work` is its database's durable work, for a run on disk. */
export function demoFigures(kind: StorageKind, summary: DemoSummaryRead, work: DurableWork | null): Figures {
  const orders = summary.orders.submitted;
  return {
    [`${kind}, CPU ms per order`]: summary.cpu.msPerOrder,
    [`${kind}, orders/s`]: summary.throughput.ordersPerSecond,
    [`${kind}, partner calls per order`]: summary.partner.calls / orders,
    [`${kind}, rows written per order`]: summary.storage.rowsWritten / orders,
    ...(work ? durableFigures(kind, work, orders) : {}),
  };
}

/**
 * A demo run's CPU by thread, whole process (`thread-cpu.ts`): where the figure per order went. The
 * threads started later are the demo's workers: the simulated partner's, and on disk the checkpoints'.
 */
export function threadFigures(kind: StorageKind, threads: ThreadCpu): Figures {
  return {
    [`${kind}, CPU s, main thread`]: threads.mainSeconds,
    [`${kind}, CPU s, V8 and loader threads`]: threads.startedWithProcessSeconds,
    [`${kind}, CPU s, worker threads`]: threads.startedLaterSeconds,
  };
}

/**
 * The demo's CPU per order split by thread over its measured seconds, as its own figure is: the three
 * groups add up to it, within what the readings' interval leaves out. "All but the workers" is the
 * process without its worker threads: in memory, without the simulated partner's thread.
 */
export function windowThreadFigures(kind: StorageKind, threads: ThreadCpu, orders: number): Figures {
  const perOrder = (seconds: number) => (seconds * 1_000) / orders;
  return {
    [`${kind}, CPU ms per order, main thread`]: perOrder(threads.mainSeconds),
    [`${kind}, CPU ms per order, V8 and loader threads`]: perOrder(threads.startedWithProcessSeconds),
    [`${kind}, CPU ms per order, worker threads`]: perOrder(threads.startedLaterSeconds),
    [`${kind}, CPU ms per order, all but the workers`]: perOrder(
      threads.mainSeconds + threads.startedWithProcessSeconds,
    ),
  };
}

/** The kinds of Cosmos DB requests and Service Bus operations any of the runs made, sorted. */
export function azureKinds(runs: readonly AzureWorkRead[]): { cosmos: string[]; serviceBus: string[] } {
  const kinds = (read: (run: AzureWorkRead) => Readonly<Record<string, number>> | undefined) =>
    [...new Set(runs.flatMap((run) => Object.keys(read(run) ?? {})))].sort();
  return { cosmos: kinds((run) => run.cosmos.byKind), serviceBus: kinds((run) => run.serviceBus?.byKind) };
}

/**
 * One Azure-path run's figures. `kinds` are those of every run compared, so that a kind one build
 * never makes counts as none rather than leaving the figure out.
 */
export function azureFigures(work: AzureWorkRead, kinds: ReturnType<typeof azureKinds>): Figures {
  const each = (count: number) => count / work.orders;
  const figures: Record<string, number> = {
    "azure, orders/s": work.orders / work.seconds,
    "azure, Cosmos requests per order": each(work.cosmos.requests),
    "azure, Cosmos RU estimate per order": each(work.cosmos.requestUnitsEstimate),
  };
  for (const kind of kinds.cosmos)
    figures[`azure, Cosmos ${kind} per order`] = each(work.cosmos.byKind[kind] ?? 0);
  if (work.serviceBus) {
    figures["azure, Service Bus operations per order"] = each(work.serviceBus.operations);
    for (const kind of kinds.serviceBus) {
      figures[`azure, Service Bus ${kind} per order`] = each(work.serviceBus.byKind[kind] ?? 0);
    }
  }
  if (work.partnerCalls !== null) figures["azure, partner calls per order"] = each(work.partnerCalls);
  return { ...figures, ...(work.durable ? durableFigures("azure", work.durable, work.orders) : {}) };
}

export interface SectionComparison {
  readonly rows: FigureComparison[];
  /** Figures some runs have and others not (e.g. a state-write count only one build keeps): not compared. */
  readonly notCompared: string[];
}

/** The figures every run has, compared pair by pair; the others named. */
export function compareSection(base: readonly Figures[], head: readonly Figures[]): SectionComparison {
  const runs = [...base, ...head];
  const names = [...new Set(runs.flatMap((run) => Object.keys(run)))];
  const common = names.filter((name) => runs.every((run) => name in run));
  const only = (run: Figures) => Object.fromEntries(common.map((name) => [name, run[name] ?? Number.NaN]));
  return {
    rows: compareRuns(base.map(only), head.map(only)),
    notCompared: names.filter((name) => !common.includes(name)),
  };
}

export interface Target {
  readonly figure: string;
  /** The most the median pair ratio (this build over the base) may be. */
  readonly atMost: number;
}

/**
 * Issue 38's targets. A "history row" is one history event, as the Durable Task Framework's Azure
 * Storage backend keeps a row per event.
 */
export const TARGETS: readonly Target[] = [
  { figure: "memory, CPU ms per order", atMost: 0.6 },
  { figure: "disk, CPU ms per order", atMost: 0.65 },
  { figure: "azure, Cosmos requests per order", atMost: 0.6 },
  { figure: "disk, history events per order", atMost: 0.6 },
  { figure: "azure, history events per order", atMost: 0.6 },
];

export interface TargetVerdict extends Target {
  readonly medianPairRatio: number;
  readonly met: boolean;
}

/** Each target whose figure was compared, and whether its median pair ratio met it. */
export function judgeTargets(rows: readonly FigureComparison[], targets = TARGETS): TargetVerdict[] {
  return targets.flatMap((target) => {
    const row = rows.find((r) => r.figure === target.figure);
    if (!row) return [];
    return [{ ...target, medianPairRatio: row.medianPairRatio, met: row.medianPairRatio <= target.atMost }];
  });
}

/** A line for each target: its verdict, or that its figure was not measured in this sitting. */
export function targetLines(verdicts: readonly TargetVerdict[], targets = TARGETS): string[] {
  return targets.map((target) => {
    const verdict = verdicts.find((v) => v.figure === target.figure);
    const measured = verdict
      ? `median pair ratio ${verdict.medianPairRatio.toFixed(3)}`
      : "not measured".padEnd(23);
    const outcome = verdict ? (verdict.met ? "met" : "missed") : "";
    return `${target.figure.padEnd(42)} ${measured}  target <= ${target.atMost.toFixed(2)}  ${outcome}`.trimEnd();
  });
}
