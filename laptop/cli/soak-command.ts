import { parseArgs } from "node:util";
import type { SoakOptions } from "../simulation/chaos/soak-options.js";
import { runChecked } from "./checked-run.js";
import { type Command, showUsage } from "./command.js";
import { integer } from "./flags.js";
import { RUN_FLAGS, runOptions } from "./run-flags.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas soak --minutes <n> [flags]   (npm run soak -- --minutes <n> [flags])

Runs the partner (with a durable ledger) and the embedded host as child processes under a steady
open-loop load with faults on, and reports every interval the orders finished per second, the
latency from POST to a terminal state (p50, p99, max) and the host's resident memory. Fails when
the RSS grows more than 10% past its reading at the end of the warm-up, or when a check of the
stores and the ledger afterwards finds an order lost, stuck or applied twice.

  --minutes <n>               how long to send orders (required, 1 to 10080)
  --rate <n>                  orders per second (default 20)
  --interval-seconds <n>      how often to report (default 60)
  --warmup-minutes <n>        RSS baseline taken at the end of this (default 5); a run no longer
                              than it reports the RSS without judging it
  --agent activity|queue      the Agent's form (default activity)
  --transient-faults, --permanent-faults, --slow, --lost-replies, --duplicate-replies <rate>
                              fault rates, 0 to 1 (defaults 0.1, 0.01, 0.02, 0.02, 0.05)
  --seed <n>                  seed of the orders and the faults (default 1)
  --drain-seconds <n>         how long the last orders may take to settle (default 600)
  --data <dir>                keep the host's database, its log and the partner's ledger here
  --json                      print exactly one JSON object on stdout
`;

export const SOAK: Command = {
  name: "soak",
  summary: [
    "a steady load with faults for a given time, reporting throughput, latency and memory",
    "every minute",
  ],
  usage: USAGE,
  run: soak,
};

async function soak(args: readonly string[]): Promise<number> {
  const options = parseSoakOptions(args);
  if (options === null) return showUsage(USAGE);
  const { runSoak } = await import("../simulation/chaos/soak.js");
  return runChecked(options, runSoak);
}

/** The flags of `sas soak`, or a UsageError naming the bad one; null when help was asked for. */
export function parseSoakOptions(args: readonly string[]): SoakOptions | null {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      ...RUN_FLAGS,
      minutes: { type: "string" },
      "interval-seconds": { type: "string" },
      "warmup-minutes": { type: "string" },
    },
  });
  if (values.help) return null;
  if (values.minutes === undefined) throw new UsageError("--minutes is required");
  return {
    ...runOptions(values, 20),
    minutes: integer(values, "minutes", 0, 1, 10_080),
    intervalSeconds: integer(values, "interval-seconds", 60, 5, 3_600),
    warmupMinutes: integer(values, "warmup-minutes", 5, 0, 10_080),
  };
}
