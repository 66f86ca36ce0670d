/**
 * `npm run fuzz -- [--runs <n>] [--seed <n>] [--json]`: property-based fuzzing of the embedded
 * pipeline's entry points (see targets.ts). Exit 0 when every property held, 1 on a violation, 2 on
 * a bad command line.
 */
import { type FuzzOptions, parseFuzzOptions, USAGE, UsageError } from "./options.js";
import { formatReport } from "./report.js";
import { runFuzz } from "./run-fuzz.js";
import { allTargets } from "./targets.js";

async function main(args: readonly string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  let options: FuzzOptions;
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

process.exitCode = await main(process.argv.slice(2));
