import { bucketStart } from "../domain/breaker-window.js";
import type { BreakerOutcome, BreakerPolicy, CallCounts } from "../domain/circuit-breaker.js";

/**
 * The calls one instance counted and has not written yet: per bucket start, how many ended and how many
 * of those failed transiently, and when the last failure ended. Kept until a write takes them, and
 * given back when that write fails (F24-10), so no outcome is lost to a store that is down for a while.
 */
export interface CallTally {
  readonly buckets: Map<number, { calls: number; failures: number }>;
  lastFailureAt: number | null;
}

export function emptyTally(): CallTally {
  return { buckets: new Map(), lastFailureAt: null };
}

/** Counts one call that ended at `at`, forgetting buckets that have left the window. */
export function addCall(tally: CallTally, at: number, outcome: BreakerOutcome, policy: BreakerPolicy): void {
  const start = bucketStart(at, policy);
  for (const old of tally.buckets.keys()) if (old < start - policy.windowMs) tally.buckets.delete(old);
  const bucket = tally.buckets.get(start) ?? { calls: 0, failures: 0 };
  bucket.calls++;
  if (outcome === "transient") {
    bucket.failures++;
    tally.lastFailureAt = Math.max(at, tally.lastFailureAt ?? at);
  }
  tally.buckets.set(start, bucket);
}

/** Adds `from` back into `into` (a write that took `from` did not get through). */
export function mergeTally(into: CallTally, from: CallTally): void {
  for (const [start, counted] of from.buckets) {
    const bucket = into.buckets.get(start) ?? { calls: 0, failures: 0 };
    bucket.calls += counted.calls;
    bucket.failures += counted.failures;
    into.buckets.set(start, bucket);
  }
  if (from.lastFailureAt !== null) {
    into.lastFailureAt = Math.max(from.lastFailureAt, into.lastFailureAt ?? from.lastFailureAt);
  }
}

export function tallyHasFailures(tally: CallTally): boolean {
  for (const bucket of tally.buckets.values()) if (bucket.failures > 0) return true;
  return false;
}

/** The tally as the domain counts it, with the instance's own run of failures. */
export function countsOf(tally: CallTally, run: number): CallCounts {
  return {
    buckets: [...tally.buckets].map(([start, { calls, failures }]) => ({ start, calls, failures })),
    lastFailureAt: tally.lastFailureAt,
    run,
  };
}

/** A copy of `tally` with one more call counted. */
export function withCall(
  tally: CallTally,
  at: number,
  outcome: BreakerOutcome,
  policy: BreakerPolicy,
): CallTally {
  const copy = emptyTally();
  mergeTally(copy, tally);
  addCall(copy, at, outcome, policy);
  return copy;
}
