import type { TargetReport } from "./run-target.js";

export interface FuzzReport {
  readonly seed: number;
  readonly runs: number;
  readonly durationMs: number;
  readonly ok: boolean;
  readonly targets: readonly TargetReport[];
}

const COLUMNS = ["cases", "accepted", "refused", "deadLettered", "dropped", "violations"] as const;
const HEADINGS = ["cases", "accepted", "refused", "dead-lettered", "dropped", "violations", "seconds"];

/** The text summary: one line per target, then each counterexample and how to replay it. */
export function formatReport(report: FuzzReport): string {
  const width = Math.max(...report.targets.map((t) => t.target.length), "target".length);
  const row = (name: string, cells: readonly (string | number)[]) =>
    [name.padEnd(width), ...cells.map((cell) => String(cell).padStart(13))].join(" ");
  const lines = [
    `seed ${report.seed}, ${report.runs} runs per target`,
    row("target", HEADINGS),
    ...report.targets.map((t) =>
      row(t.target, [...COLUMNS.map((column) => t[column]), (t.durationMs / 1_000).toFixed(1)]),
    ),
  ];
  for (const target of report.targets) {
    const example = target.counterexample;
    if (!example) continue;
    lines.push(
      "",
      `VIOLATION in ${target.target} (after ${target.runs} runs, shrunk ${example.shrinks} times):`,
      `  ${example.violation}`,
      `  counterexample: ${example.value}`,
      `  ${example.failsAlone ? "fails on its own, on a fresh session" : "fails only after the runs before it"}`,
      `  replay: npm run fuzz -- --seed ${report.seed} --runs ${report.runs}` +
        (example.path === null ? "" : ` (fast-check path ${shortened(example.path)})`),
    );
  }
  lines.push("", `${report.ok ? "ok" : "FAILED"} in ${(report.durationMs / 1_000).toFixed(1)} s`);
  return lines.join("\n");
}

/** A shrink path can run to thousands of characters; --json prints it whole. */
function shortened(path: string): string {
  return path.length > 120 ? `${path.slice(0, 120)}... (--json has it whole)` : path;
}
