import { parseArgs } from "node:util";
import { agentFrom, COMMON, type Flags, faultsFrom, integer, rate } from "../../cli/flags.js";
import { UsageError } from "../../cli/usage-error.js";
import type { PartnerFaults } from "../partner/faults.js";

/** What a chaos run and a soak share. */
export interface RunOptions {
  /** Orders POSTed per second, on a fixed schedule. */
  readonly rate: number;
  readonly agent: "activity" | "queue";
  readonly faults: PartnerFaults;
  readonly duplicateReplies: number;
  readonly seed: number;
  /** How long, after the last order is accepted, every order may take to settle. */
  readonly drainSeconds: number;
  readonly json: boolean;
  /** Where the host's database and the partner's ledger go; default a temporary directory, removed after a pass. */
  readonly data?: string;
}

export interface ChaosOptions extends RunOptions {
  readonly orders: number;
  /** Times the host is killed with SIGKILL and started again on the same data. */
  readonly kills: number;
  /** Times the partner is killed and kept down for `outageSeconds`, then started on the same ledger. */
  readonly partnerOutages: number;
  readonly outageSeconds: number;
  /**
   * Start the host with workflow version 1 and, from the first kill on, with the default: a deployment
   * of a new workflow version under orders in flight.
   */
  readonly upgrade: boolean;
}

export const CHAOS_USAGE = `usage: sas chaos [flags]   (npm run chaos -- [flags])

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

export const CHAOS_FAULTS: PartnerFaults = { transient: 0.1, permanent: 0.01, slow: 0.02, lostReply: 0.02 };

/** The flags a chaos run and a soak share, as `parseArgs` takes them. */
export const RUN_FLAGS = {
  ...COMMON,
  rate: { type: "string" },
  "drain-seconds": { type: "string" },
  json: { type: "boolean" },
} as const;

/** What a chaos run and a soak share, from their flags; `defaultRate` is the run's own. */
export function runOptions(flags: Flags, defaultRate: number): RunOptions {
  if (flags.data === ":memory:")
    throw new UsageError("--data must be a directory: the host is killed or stopped and read again from it");
  return {
    rate: integer(flags, "rate", defaultRate, 1, 10_000),
    agent: agentFrom(flags),
    faults: faultsFrom(flags, CHAOS_FAULTS),
    duplicateReplies: rate(flags, "duplicate-replies", 0.05),
    seed: integer(flags, "seed", 1, -2_147_483_648, 2_147_483_647),
    drainSeconds: integer(flags, "drain-seconds", 600, 10, 86_400),
    json: flags.json === true,
    ...(typeof flags.data === "string" ? { data: flags.data } : {}),
  };
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
  const flags = values as Flags;
  const kills = integer(flags, "kills", 3, 0, 1_000);
  const upgrade = values.upgrade === true;
  if (upgrade && kills === 0)
    throw new UsageError(
      "--upgrade needs --kills of at least 1: the upgrade is the restart after the first kill",
    );
  return {
    ...runOptions(flags, 50),
    orders: integer(flags, "orders", 1_000, 1, 1_000_000),
    kills,
    partnerOutages: integer(flags, "partner-outages", 1, 0, 1_000),
    outageSeconds: integer(flags, "outage-seconds", 10, 1, 3_600),
    upgrade,
  };
}
