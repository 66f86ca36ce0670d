/**
 * `npm run fuzz -- [--runs <n>] [--seed <n>] [--json]`: property-based fuzzing of the embedded
 * pipeline's entry points (see targets.ts). Exit 0 when every property held, 1 on a violation, 2 on
 * a bad command line.
 */
import { parseFuzzOptions, USAGE, UsageError } from "./options.js";
import { type FuzzReport, formatReport } from "./report.js";
import type { Fuzzable, FuzzSettings, TargetReport } from "./run-target.js";
import { allTargets } from "./targets.js";

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

async function main(args: readonly string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  let options: ReturnType<typeof parseFuzzOptions>;
  try {
    options = parseFuzzOptions(args, () => Math.floor(Math.random() * 2 ** 31));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (!options.json) console.log(`fuzzing with seed ${options.seed}, ${options.runs} runs per target`);
  const report = await runFuzz(allTargets(), options);
  console.log(options.json ? JSON.stringify(report) : formatReport(report));
  return report.ok ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
