import type { PartnerFaults } from "../../partner/faults.js";
import { UsageError } from "./usage-error.js";

/**
 * The string flags named `Name`, as `parseArgs` returns them. `NoInfer` keeps the name given the only
 * source of `Name`, so any command's parsed values fit, and a misspelt or boolean flag does not.
 */
export type StringFlags<Name extends string> = { readonly [Key in NoInfer<Name>]?: string | undefined };

export function rate<Name extends string>(flags: StringFlags<Name>, name: Name, fallback: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new UsageError(`--${name} must be a number from 0 to 1; got ${raw}`);
  }
  return value;
}

export function integer<Name extends string>(
  flags: StringFlags<Name>,
  name: Name,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}; got ${raw}`);
  }
  return Number(raw);
}

/** The flags of the simulated partner's faults. */
export const PARTNER_FAULT_FLAGS = ["transient-faults", "permanent-faults", "slow", "lost-replies"] as const;

export function faultsFrom(
  flags: StringFlags<(typeof PARTNER_FAULT_FLAGS)[number]>,
  defaults: PartnerFaults,
): PartnerFaults {
  const faults = {
    transient: rate(flags, "transient-faults", defaults.transient),
    permanent: rate(flags, "permanent-faults", defaults.permanent),
    slow: rate(flags, "slow", defaults.slow),
    lostReply: rate(flags, "lost-replies", defaults.lostReply),
  };
  const sum = faults.transient + faults.permanent + faults.slow + faults.lostReply;
  if (sum > 1) throw new UsageError(`the fault rates add up to ${sum}; at most 1`);
  return faults;
}

export function agentFrom(flags: StringFlags<"agent">): "activity" | "queue" {
  const agent = flags.agent ?? "activity";
  if (agent !== "activity" && agent !== "queue")
    throw new UsageError(`--agent must be activity or queue; got ${agent}`);
  return agent;
}

/** `--help` and `-h`, which every command takes. */
export const HELP = { help: { type: "boolean", short: "h" } } as const;

/** The flags of the pipeline's runs (start, demo, chaos, soak; partner takes them too). */
export const COMMON = {
  "transient-faults": { type: "string" },
  "permanent-faults": { type: "string" },
  slow: { type: "string" },
  "lost-replies": { type: "string" },
  "duplicate-replies": { type: "string" },
  seed: { type: "string" },
  agent: { type: "string" },
  data: { type: "string" },
  ...HELP,
} as const;

/** The usage lines of the partner's fault flags. */
export const FAULT_FLAGS_USAGE = `  --transient-faults <rate>   share of partner calls failing with 503/429      (0 to 1)
  --permanent-faults <rate>   share of partner calls rejected with 422         (0 to 1)
  --slow <rate>               share of partner answers delayed past deadlines  (0 to 1)
  --lost-replies <rate>       share of answers lost after the effect applied   (0 to 1)
`;

/** The usage lines of the flags `sas start` and `sas demo` share, but for --data. */
export const PIPELINE_FLAGS_USAGE = `${FAULT_FLAGS_USAGE}  --duplicate-replies <rate>  share of Agent replies delivered twice           (0 to 1)
  --seed <n>                  seed of every fault decision                     (integer)
  --agent activity|queue      the Agent's form                                 (default activity)
`;
