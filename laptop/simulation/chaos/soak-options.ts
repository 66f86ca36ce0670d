import { parseArgs } from "node:util";
import { type Flags, integer } from "../../cli/flags.js";
import { UsageError } from "../../cli/usage-error.js";
import { RUN_FLAGS, type RunOptions, runOptions } from "./chaos-options.js";

export interface SoakOptions extends RunOptions {
  readonly minutes: number;
  readonly intervalSeconds: number;
  /** RSS at the end of this is the baseline; later readings may exceed it by at most `RSS_GROWTH_LIMIT`. */
  readonly warmupMinutes: number;
}

export const SOAK_USAGE = `usage: sas soak --minutes <n> [flags]   (npm run soak -- --minutes <n> [flags])

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
  const flags = values as Flags;
  if (flags.minutes === undefined) throw new UsageError("--minutes is required");
  return {
    ...runOptions(flags, 20),
    minutes: integer(flags, "minutes", 0, 1, 10_080),
    intervalSeconds: integer(flags, "interval-seconds", 60, 5, 3_600),
    warmupMinutes: integer(flags, "warmup-minutes", 5, 0, 10_080),
  };
}
