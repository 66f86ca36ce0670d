/** A source of uniformly distributed numbers in [0, 1). Injected so that tests and replays are repeatable. */
export type RandomSource = () => number;

export interface BackoffPolicy {
  /** Ceiling of the first retry's delay. */
  readonly baseMs: number;
  /** No delay ceiling grows past this. */
  readonly capMs: number;
}

/** The exponential ceiling of retry `retry` (1 for the first retry): base * 2^(retry-1), capped. */
export function backoffCeilingMs(policy: BackoffPolicy, retry: number): number {
  if (!Number.isInteger(retry) || retry < 1) throw new RangeError("retry must be an integer of at least 1");
  const exponent = Math.min(retry - 1, 52);
  return Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
}

/**
 * "Full jitter": a delay drawn uniformly from [0, ceiling). Spreading retries over the whole interval
 * keeps many clients that failed together from retrying together.
 */
export function fullJitterDelayMs(policy: BackoffPolicy, retry: number, random: RandomSource): number {
  const r = random();
  if (!(r >= 0 && r < 1)) throw new RangeError(`random source returned ${r}; expected a number in [0, 1)`);
  return Math.floor(r * backoffCeilingMs(policy, retry));
}

/** A seeded generator (mulberry32) for tests, simulations and fault injection that must repeat exactly. */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
