import { parseArgs } from "node:util";
import type { ChaosOptions } from "../simulation/chaos/chaos-options.js";
import { runChecked } from "./checked-run.js";
import { type Command, showUsage } from "./command.js";
import { integer } from "./flags.js";
import { RUN_FLAGS, runOptions } from "./run-flags.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas chaos [flags]   (npm run chaos -- [flags])

Starts a simulated partner with a durable ledger (sas partner --ledger) and the embedded host
(sas start --partner-url) as child processes, POSTs orders at a fixed rate, kills the host with
SIGKILL at random moments and starts it again on the same data, takes the partner down for longer
than a step's deadline and brings it back, then checks from the host's database and the partner's
ledger that every accepted order ended, no effect was applied twice, and every order left in Error
or CompensationFailed was refused for good. Exits 1 on any violation.

  --orders <n>                orders to send (default 1000)
  --rate <n>                  orders per second (default 50)
  --kills <n>                 host kills (default 3)
  --partner-outages <n>       partner outages (default 1)
  --outage-seconds <n>        length of each outage (default 10: twice the step deadline)
  --agent activity|queue      the Agent's form (default activity)
  --upgrade                   start the host with workflow version 1 and restart it after the first
                              kill (aimed at a compensation) with the default version: the orders
                              accepted before it run version 1 to the end, the later ones the default
  --transient-faults, --permanent-faults, --slow, --lost-replies, --duplicate-replies <rate>
                              fault rates, 0 to 1 (defaults 0.1, 0.01, 0.02, 0.02, 0.05)
  --seed <n>                  seed of the orders, the faults and the moments of the kills (default 1)
  --drain-seconds <n>         how long the orders may take to settle after the last is accepted (default 600)
  --data <dir>                keep the host's database, its log and the partner's ledger here
  --json                      print exactly one JSON object on stdout
`;

export const CHAOS: Command = {
  name: "chaos",
  summary: [
    "kill the host and the partner at random moments under load, then check that nothing",
    "was lost or applied twice",
  ],
  usage: USAGE,
  run: chaos,
};

async function chaos(args: readonly string[]): Promise<number> {
  const options = parseChaosOptions(args);
  if (options === null) return showUsage(USAGE);
  const { runChaos } = await import("../simulation/chaos/chaos.js");
  return runChecked(options, runChaos);
}

/** The flags of `sas chaos`, or a UsageError naming the bad one; null when help was asked for. */
export function parseChaosOptions(args: readonly string[]): ChaosOptions | null {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      ...RUN_FLAGS,
      orders: { type: "string" },
      kills: { type: "string" },
      "partner-outages": { type: "string" },
      "outage-seconds": { type: "string" },
      upgrade: { type: "boolean" },
    },
  });
  if (values.help) return null;
  const kills = integer(values, "kills", 3, 0, 1_000);
  const upgrade = values.upgrade === true;
  if (upgrade && kills === 0)
    throw new UsageError(
      "--upgrade needs --kills of at least 1: the upgrade is the restart after the first kill",
    );
  return {
    ...runOptions(values, 50),
    orders: integer(values, "orders", 1_000, 1, 1_000_000),
    kills,
    partnerOutages: integer(values, "partner-outages", 1, 0, 1_000),
    outageSeconds: integer(values, "outage-seconds", 10, 1, 3_600),
    upgrade,
  };
}
