import type { BreakerPolicy } from "../domain/circuit-breaker.js";
import { type Environment, SettingsError } from "./settings-error.js";

/** The partner operations' circuit breakers: on or off, the policy they share, and how long `admit` waits. */
export interface BreakerSettings extends BreakerPolicy {
  readonly enabled: boolean;
  /** The longest an Agent waits for the breaker's store before it goes by the state it knew (F24-2). */
  readonly admitWaitMs: number;
}

type BreakerNumbers = Omit<BreakerSettings, "enabled">;

interface NumberSetting {
  readonly name: string;
  readonly defaultValue: number;
  readonly min: number;
  readonly max: number;
  /** A whole number (most), or any decimal in range (the rate). */
  readonly integer: boolean;
}

const setting = (name: string, defaultValue: number, min: number, max: number, integer = true) => ({
  name,
  defaultValue,
  min,
  max,
  integer,
});

const MINUTE = 60_000;

export const BREAKER_ENABLED_SETTING = "BREAKER_ENABLED";

/** When BREAKER_PROBE_LEASE_MS is not set: at least this much longer than PARTNER_CALL_TIMEOUT_MS. */
const PROBE_LEASE_MARGIN_MS = 5_000;

/**
 * Each number setting with its default and range. The opening thresholds take a partner for down, not
 * flaky (F24-11): at 20% transient failures, a window of 30 to 39 calls (the fewest it judges) reaches
 * 80% failures with a probability of about 1e-11 per failure, and a run of 15 comes 0.2^14 = 1.6e-10
 * per failure; at 30% (transient faults, slow and lost answers together), 5.9e-8 and 4.8e-8.
 * `test/breaker/false-openings.test.ts` computes and checks these figures.
 */
export const BREAKER_NUMBER_SETTINGS = {
  failureRun: setting("BREAKER_FAILURE_RUN", 9, 1, 1_000),
  failureRate: setting("BREAKER_FAILURE_RATE", 0.8, 0.01, 1, false),
  minCalls: setting("BREAKER_MIN_CALLS", 30, 1, 100_000),
  windowMs: setting("BREAKER_WINDOW_MS", 30_000, 1_000, 60 * MINUTE),
  openMs: setting("BREAKER_OPEN_MS", 5_000, 100, 60 * MINUTE),
  maxOpenMs: setting("BREAKER_MAX_OPEN_MS", 60_000, 100, 24 * 60 * MINUTE),
  probeLeaseMs: setting("BREAKER_PROBE_LEASE_MS", 15_000, 1_000, 60 * MINUTE),
  admitWaitMs: setting("BREAKER_ADMIT_WAIT_MS", 1_000, 10, MINUTE),
} as const satisfies Record<keyof BreakerNumbers, NumberSetting>;

/** Every setting `loadBreakerSettings` reads (for the sample settings file and its check). */
export const BREAKER_SETTING_NAMES: readonly string[] = [
  BREAKER_ENABLED_SETTING,
  ...Object.values(BREAKER_NUMBER_SETTINGS).map((s) => s.name),
];

export interface BreakerSettingsContext {
  /**
   * PARTNER_CALL_TIMEOUT_MS as the pipeline settings read it: a probe's lease must outlast its call, or a
   * second probe could go out while the first is still waiting for its answer.
   */
  readonly partnerCallTimeoutMs?: number;
}

/**
 * Reads and validates the circuit breaker settings; throws a SettingsError naming every bad one. The
 * numbers are checked even when the breaker is off, so turning it on later cannot fail start-up.
 */
export function loadBreakerSettings(env: Environment, context: BreakerSettingsContext = {}): BreakerSettings {
  const problems: string[] = [];
  const enabled = readEnabled(env, problems);
  const values = Object.fromEntries(
    Object.entries(BREAKER_NUMBER_SETTINGS).map(([key, s]) => [key, readNumber(env, s, problems)]),
  ) as Record<keyof BreakerNumbers, number>;
  if (values.openMs > values.maxOpenMs) {
    problems.push(
      `BREAKER_OPEN_MS (${values.openMs}) must not exceed BREAKER_MAX_OPEN_MS (${values.maxOpenMs})`,
    );
  }
  const callTimeout = context.partnerCallTimeoutMs;
  const leaseGiven = (env[BREAKER_NUMBER_SETTINGS.probeLeaseMs.name]?.trim() ?? "") !== "";
  if (callTimeout !== undefined && !leaseGiven) {
    // Unset, the lease follows a longer call timeout rather than refuse it.
    values.probeLeaseMs = Math.max(values.probeLeaseMs, callTimeout + PROBE_LEASE_MARGIN_MS);
  }
  if (callTimeout !== undefined && values.probeLeaseMs <= callTimeout) {
    problems.push(
      `BREAKER_PROBE_LEASE_MS (${values.probeLeaseMs}) must be longer than PARTNER_CALL_TIMEOUT_MS (${callTimeout}), so a probe's lease outlasts its call`,
    );
  }
  if (problems.length > 0) throw new SettingsError(problems);
  return { enabled, ...values };
}

function readEnabled(env: Environment, problems: string[]): boolean {
  const raw = env[BREAKER_ENABLED_SETTING]?.trim().toLowerCase();
  if (raw === undefined || raw === "" || raw === "true") return true;
  if (raw === "false") return false;
  problems.push(
    `${BREAKER_ENABLED_SETTING}=${JSON.stringify(env[BREAKER_ENABLED_SETTING])}: must be true or false`,
  );
  return true;
}

function readNumber(env: Environment, s: NumberSetting, problems: string[]): number {
  const raw = env[s.name];
  if (raw === undefined || raw.trim() === "") return s.defaultValue;
  const text = raw.trim();
  const shape = s.integer ? /^-?\d+$/ : /^-?(\d+\.?\d*|\.\d+)$/;
  const value = Number(text);
  if (!shape.test(text) || value < s.min || value > s.max) {
    const kind = s.integer ? "an integer" : "a number";
    problems.push(`${s.name}=${JSON.stringify(raw)}: must be ${kind} from ${s.min} to ${s.max}`);
    return s.defaultValue;
  }
  return value;
}
