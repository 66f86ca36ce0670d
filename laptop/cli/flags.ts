import type { PartnerFaults } from "../simulation/partner/faults.js";
import { UsageError } from "./usage-error.js";

/** Flags as `parseArgs` returns them. */
export type Flags = Record<string, string | boolean | undefined>;

export function rate(flags: Flags, name: string, fallback: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new UsageError(`--${name} must be a number from 0 to 1; got ${String(raw)}`);
  }
  return value;
}

export function integer(flags: Flags, name: string, fallback: number, min: number, max: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== "string" || !/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}; got ${String(raw)}`);
  }
  return Number(raw);
}

export function faultsFrom(flags: Flags, defaults: PartnerFaults): PartnerFaults {
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

export function agentFrom(flags: Flags): "activity" | "queue" {
  const agent = flags.agent ?? "activity";
  if (agent !== "activity" && agent !== "queue")
    throw new UsageError(`--agent must be activity or queue; got ${String(agent)}`);
  return agent;
}

export const COMMON = {
  "transient-faults": { type: "string" },
  "permanent-faults": { type: "string" },
  slow: { type: "string" },
  "lost-replies": { type: "string" },
  "duplicate-replies": { type: "string" },
  seed: { type: "string" },
  agent: { type: "string" },
  data: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;
