import type { Clock } from "../ports/clock.js";

/**
 * `read`, answered from its last result while that is younger than `reuseMs` on `clock`: for a value
 * every request asks and each reading costs (a count on Cosmos DB). A failed reading is not reused.
 */
export function reusedReading<T>(clock: Clock, reuseMs: number, read: () => Promise<T>): () => Promise<T> {
  let last: { readonly at: number; readonly value: Promise<T> } | null = null;
  return () => {
    const now = clock.now().getTime();
    if (!last || now - last.at >= reuseMs) {
      const value = read();
      last = { at: now, value };
      value.catch(() => {
        if (last?.value === value) last = null;
      });
    }
    return last.value;
  };
}
