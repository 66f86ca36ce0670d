import type { FuzzReport } from "./report.js";
import type { Fuzzable, FuzzSettings, TargetReport } from "./run-target.js";

/** Runs each target in turn with the same runs and seed. */
export async function runFuzz(targets: readonly Fuzzable[], settings: FuzzSettings): Promise<FuzzReport> {
  const started = performance.now();
  const reports: TargetReport[] = [];
  for (const target of targets) reports.push(await target.fuzz(settings));
  return {
    seed: settings.seed,
    runs: settings.runs,
    durationMs: Math.round(performance.now() - started),
    ok: reports.every((report) => report.violations === 0),
    targets: reports,
  };
}
