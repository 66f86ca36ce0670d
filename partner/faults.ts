import { seededRandom } from "../src/domain/backoff.js";
/**
 * Fault injection for the simulated partner. Each call's fate is a pure function of the seed, the
 * idempotency key and how many calls that key has seen, so neither concurrency nor the order in which
 * different keys arrive changes any outcome: a failing run replays exactly with the same seed.
 */

/** Rates in [0, 1] whose sum is at most 1; what is left over is the rate of normal answers. */
export interface PartnerFaults {
  /** 503 (or 429 with Retry-After), nothing applied. */
  transient: number;
  /** 422, nothing applied, and every later call with the same key gets the same 422. */
  permanent: number;
  /** Applied (or replayed), answered after `slowMs`. */
  slow: number;
  /** Applied (or replayed), then the connection is dropped without an answer. */
  lostReply: number;
}

export const FAULT_KINDS = ["transient", "permanent", "slow", "lostReply"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const NO_FAULTS: Readonly<PartnerFaults> = Object.freeze({
  transient: 0,
  permanent: 0,
  slow: 0,
  lostReply: 0,
});

/** Fills in the missing rates with 0 and checks them; a RangeError names the offending option. */
export function resolveFaults(input: Partial<PartnerFaults> = {}): PartnerFaults {
  for (const name of Object.keys(input)) {
    if (!(FAULT_KINDS as readonly string[]).includes(name)) {
      throw new RangeError(`faults.${name} is not a fault kind; expected one of ${FAULT_KINDS.join(", ")}`);
    }
  }
  const faults: PartnerFaults = { ...NO_FAULTS };
  for (const kind of FAULT_KINDS) {
    const rate: unknown = input[kind] ?? 0;
    if (typeof rate !== "number" || !Number.isFinite(rate) || rate < 0 || rate > 1) {
      throw new RangeError(`faults.${kind} must be a rate from 0 to 1, got ${String(rate)}`);
    }
    faults[kind] = rate;
  }
  const sum = FAULT_KINDS.reduce((total, kind) => total + faults[kind], 0);
  // Tolerance for rates such as 0.1 + 0.2 + 0.7 that add up to 1 only on paper.
  if (sum > 1 + 1e-9) {
    throw new RangeError(`faults: ${FAULT_KINDS.join(" + ")} must be at most 1, got ${sum}`);
  }
  return faults;
}

export type FaultDecision =
  | { readonly kind: "none" }
  | { readonly kind: "transient"; readonly throttled: boolean }
  | { readonly kind: "permanent" }
  | { readonly kind: "slow" }
  | { readonly kind: "lostReply" };

/**
 * Picks one outcome for the `call`-th call (1-based) with `key`. Kinds not in `allowed` keep their
 * share of the interval but turn into normal answers, so restricting kinds never raises another rate.
 */
export function decideFault(
  faults: PartnerFaults,
  seed: number,
  key: string,
  call: number,
  allowed: readonly FaultKind[] = FAULT_KINDS,
): FaultDecision {
  // The hash seeds mulberry32 (domain/backoff.ts), which also mixes FNV's weak low bits.
  const random = seededRandom(fnv1a32(`${seed}\u0000${key}\u0000${call}`));
  const draw = random();
  let upper = 0;
  for (const kind of FAULT_KINDS) {
    upper += faults[kind];
    if (draw < upper) {
      if (!allowed.includes(kind)) return { kind: "none" };
      // Half of the transient faults are throttling answers; a second draw decides which.
      return kind === "transient" ? { kind, throttled: random() < 0.5 } : { kind };
    }
  }
  return { kind: "none" };
}

/** FNV-1a over the UTF-16 code units of `text`: a small, stable 32-bit hash. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
