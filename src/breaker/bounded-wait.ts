import type { Clock } from "../ports/clock.js";

export type Bounded<T> = { readonly done: true; readonly value: T } | { readonly done: false };

/**
 * `work`'s result if it settles within `ms` on `clock`, else `{ done: false }`: the caller stops waiting
 * and the work goes on (its result is still applied where it lands). A rejection of `work` in time
 * rejects; the timer is cleared either way.
 */
export async function within<T>(clock: Clock, work: Promise<T>, ms: number): Promise<Bounded<T>> {
  const timer = new AbortController();
  const late = { done: false } as const;
  const timeout = clock.sleep(ms, timer.signal).then(
    () => late,
    () => late,
  );
  try {
    return await Promise.race([work.then((value) => ({ done: true, value }) as const), timeout]);
  } finally {
    timer.abort();
  }
}
