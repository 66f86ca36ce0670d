/**
 * Two builds' benchmark figures side by side, from runs made alternately in one sitting: each
 * figure's median in both, and the median of the ratios of runs made one after the other, which the
 * machine's drift over the sitting moves less than it moves either median.
 */

/** One run's figures by name, in the order a comparison prints them. */
export type Figures = Readonly<Record<string, number>>;

/** What `bench/runtime.ts --json` prints, as far as a comparison reads it. */
export interface RuntimeReport {
  readonly scenarios: readonly {
    readonly scenario: string;
    readonly ours: { readonly memory: number; readonly file: number };
    readonly theirs: number;
    readonly ratio: number;
  }[];
}

export interface FigureComparison {
  /** e.g. "sequence, ours (memory)", "race, CPU ms per orchestration". */
  readonly figure: string;
  readonly baseMedian: number;
  readonly headMedian: number;
  /** The head's median over the base's. */
  readonly ratioOfMedians: number;
  /** The median over the pairs of the head's run over the base's run made next to it. */
  readonly medianPairRatio: number;
  /** In how many of the pairs the head's figure was the higher. */
  readonly headHigherIn: number;
  readonly pairs: number;
}

const FIGURES = [
  ["ours (memory)", (s) => s.ours.memory],
  ["ours (file)", (s) => s.ours.file],
  ["durabletask-js", (s) => s.theirs],
  ["ours (memory) / durabletask-js", (s) => s.ratio],
] as const satisfies readonly (readonly [string, (s: RuntimeReport["scenarios"][number]) => number])[];

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (index: number) => sorted[index] ?? Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? at(middle) : (at(middle - 1) + at(middle)) / 2;
}

/** A `bench:runtime` report's figures, each scenario's four. */
export function runtimeFigures(report: RuntimeReport): Figures {
  const figures: Record<string, number> = {};
  for (const scenario of report.scenarios) {
    for (const [label, read] of FIGURES) figures[`${scenario.scenario}, ${label}`] = read(scenario);
  }
  return figures;
}

/** Every figure of the base's first run, in its order; the i-th runs of each build make a pair. */
export function compareRuns(base: readonly Figures[], head: readonly Figures[]): FigureComparison[] {
  const pairs = Math.min(base.length, head.length);
  if (pairs === 0) throw new Error("no pair of runs to compare");
  return Object.keys(base[0] ?? {}).map((figure) => {
    const read = (run: Figures) => {
      const value = run[figure];
      if (value === undefined) throw new Error(`a run has no figure "${figure}"`);
      return value;
    };
    const baseValues = base.slice(0, pairs).map(read);
    const headValues = head.slice(0, pairs).map(read);
    const ratios = headValues.map((value, i) => value / (baseValues[i] ?? Number.NaN));
    const baseMedian = median(baseValues);
    const headMedian = median(headValues);
    return {
      figure,
      baseMedian,
      headMedian,
      ratioOfMedians: headMedian / baseMedian,
      medianPairRatio: median(ratios),
      headHigherIn: ratios.filter((ratio) => ratio > 1).length,
      pairs,
    };
  });
}

/** The comparison as a table, one row a figure. */
export function comparisonTable(rows: readonly FigureComparison[]): string {
  // Ratios with two decimals, rates as whole numbers, milliseconds with four.
  const number = (row: FigureComparison, value: number) => {
    if (row.figure.includes(" / ")) return value.toFixed(2);
    return value >= 100 ? Math.round(value).toLocaleString("en-US") : value.toFixed(4);
  };
  const lines = [
    "figure                                      base median  this median  ratio of medians  median pair ratio  this higher",
  ];
  for (const row of rows) {
    lines.push(
      [
        row.figure.padEnd(42),
        number(row, row.baseMedian).padStart(12),
        number(row, row.headMedian).padStart(12),
        row.ratioOfMedians.toFixed(3).padStart(17),
        row.medianPairRatio.toFixed(3).padStart(18),
        `${row.headHigherIn} of ${row.pairs}`.padStart(12),
      ].join(" "),
    );
  }
  return lines.join("\n");
}
