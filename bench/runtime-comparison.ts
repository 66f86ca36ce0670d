/**
 * Two builds' `bench:runtime` figures side by side, from runs made alternately in one sitting: each
 * figure's median in both, and the median of the ratios of runs made one after the other, which the
 * machine's drift over the sitting moves less than it moves either median.
 */

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
  /** e.g. "sequence, ours (memory)". */
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
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Every figure of every scenario the two builds' reports share; the i-th runs of each make a pair. */
export function compareRuntimeRuns(
  base: readonly RuntimeReport[],
  head: readonly RuntimeReport[],
): FigureComparison[] {
  const pairs = Math.min(base.length, head.length);
  if (pairs === 0) throw new Error("no pair of runs to compare");
  const scenarios = base[0]?.scenarios.map((s) => s.scenario) ?? [];
  const rows: FigureComparison[] = [];
  for (const scenario of scenarios) {
    for (const [label, read] of FIGURES) {
      const figure = (report: RuntimeReport | undefined) => {
        const found = report?.scenarios.find((s) => s.scenario === scenario);
        if (!found) throw new Error(`a run has no ${scenario} scenario`);
        return read(found);
      };
      const baseValues = base.slice(0, pairs).map(figure);
      const headValues = head.slice(0, pairs).map(figure);
      const ratios = headValues.map((value, i) => value / (baseValues[i] as number));
      const baseMedian = median(baseValues);
      const headMedian = median(headValues);
      rows.push({
        figure: `${scenario}, ${label}`,
        baseMedian,
        headMedian,
        ratioOfMedians: headMedian / baseMedian,
        medianPairRatio: median(ratios),
        headHigherIn: ratios.filter((ratio) => ratio > 1).length,
        pairs,
      });
    }
  }
  return rows;
}

/** The comparison as a table, one row a figure. */
export function comparisonTable(rows: readonly FigureComparison[]): string {
  const number = (row: FigureComparison, value: number) =>
    row.figure.endsWith("/ durabletask-js") ? value.toFixed(2) : Math.round(value).toLocaleString("en-US");
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
