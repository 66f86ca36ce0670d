/**
 * A closed circuit breaker's rolling window of call outcomes (`circuit-breaker.ts`): `BREAKER_BUCKETS`
 * time buckets covering `windowMs`, so many instances' counts add up without one record per call.
 */

/** The window is this many buckets; it covers between (n-1)/n and all of `windowMs`. */
export const BREAKER_BUCKETS = 5;

export interface WindowBucket {
  /** Start of the bucket, a multiple of the bucket width (ms since the epoch). */
  readonly start: number;
  readonly calls: number;
  readonly failures: number;
}

/** The part of the breaker's policy the window needs. */
export interface WindowSpan {
  readonly windowMs: number;
}

/** The width of one bucket of the window. */
export function bucketWidth(span: WindowSpan): number {
  return Math.max(1, Math.ceil(span.windowMs / BREAKER_BUCKETS));
}

/** Start of the bucket that holds time `at`. */
export function bucketStart(at: number, span: WindowSpan): number {
  const width = bucketWidth(span);
  return Math.floor(at / width) * width;
}

/** The earliest bucket start still in the window at `now`. */
function windowFloor(now: number, span: WindowSpan): number {
  return bucketStart(now, span) - (BREAKER_BUCKETS - 1) * bucketWidth(span);
}

/** The window with `calls` (and `failures` of them) added to the bucket at `start`, its old buckets dropped. */
export function addToWindow(
  window: readonly WindowBucket[],
  start: number,
  calls: number,
  failures: number,
  now: number,
  span: WindowSpan,
): readonly WindowBucket[] {
  const floor = windowFloor(now, span);
  const kept = window.filter((bucket) => bucket.start >= floor);
  if (start < floor) return kept;
  const found = kept.find((bucket) => bucket.start === start);
  const others = kept.filter((bucket) => bucket !== found);
  const bucket = { start, calls: (found?.calls ?? 0) + calls, failures: (found?.failures ?? 0) + failures };
  return [...others, bucket].sort((a, b) => a.start - b.start);
}

/** Calls and failures the window's buckets still in it at `now` hold. */
export function bucketTotals(
  window: readonly WindowBucket[],
  now: number,
  span: WindowSpan,
): { readonly calls: number; readonly failures: number } {
  const floor = windowFloor(now, span);
  let calls = 0;
  let failures = 0;
  for (const bucket of window) {
    if (bucket.start < floor) continue;
    calls += bucket.calls;
    failures += bucket.failures;
  }
  return { calls, failures };
}
