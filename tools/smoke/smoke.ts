/**
 * `npm run smoke -- --store <url> [--orders <n>] [--timeout-seconds <s>] [--outage <s>]`: places orders
 * through a storefront (local or deployed) and waits for each to reach a final state, with --outage
 * taking the partner down mid-run. Exit 0 when all did, 1 when one did not, the store could not be
 * used or the outage did not happen, 2 on a bad command line.
 */
import { parseSmokeOptions, type SmokeOptions, USAGE, UsageError } from "./options.js";
import { formatReport } from "./report.js";
import { runSmoke } from "./run-smoke.js";

async function main(args: readonly string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let options: SmokeOptions;
  try {
    options = parseSmokeOptions(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  const report = await runSmoke({
    ...options,
    timeoutMs: options.timeoutSeconds * 1000,
    progress: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(formatReport(report));
  return report.ok ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
