import type { PartnerFaults } from "../../partner/faults.js";
import type { RunOptions } from "../simulation/chaos/chaos-options.js";
import {
  agentFrom,
  COMMON,
  faultsFrom,
  integer,
  type PARTNER_FAULT_FLAGS,
  rate,
  type StringFlags,
} from "./flags.js";
import { UsageError } from "./usage-error.js";

/** The flags a chaos run and a soak share, as `parseArgs` takes them. */
export const RUN_FLAGS = {
  ...COMMON,
  rate: { type: "string" },
  "drain-seconds": { type: "string" },
  json: { type: "boolean" },
} as const;

type RunFlags = StringFlags<
  | "rate"
  | "drain-seconds"
  | "duplicate-replies"
  | "seed"
  | "agent"
  | "data"
  | (typeof PARTNER_FAULT_FLAGS)[number]
> & { readonly json?: boolean | undefined };

const RUN_FAULTS: PartnerFaults = { transient: 0.1, permanent: 0.01, slow: 0.02, lostReply: 0.02 };

/** What a chaos run and a soak share, from their flags; `defaultRate` is the run's own. */
export function runOptions(flags: RunFlags, defaultRate: number): RunOptions {
  if (flags.data === ":memory:")
    throw new UsageError("--data must be a directory: the host is killed or stopped and read again from it");
  return {
    rate: integer(flags, "rate", defaultRate, 1, 10_000),
    agent: agentFrom(flags),
    faults: faultsFrom(flags, RUN_FAULTS),
    duplicateReplies: rate(flags, "duplicate-replies", 0.05),
    seed: integer(flags, "seed", 1, -2_147_483_648, 2_147_483_647),
    drainSeconds: integer(flags, "drain-seconds", 600, 10, 86_400),
    json: flags.json === true,
    ...(flags.data !== undefined ? { data: flags.data } : {}),
  };
}
