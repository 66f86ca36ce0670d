import type { BreakerOutcome, BreakerPolicy, BreakerState } from "../domain/circuit-breaker.js";

/**
 * One instance's own run of transient failures: when each of its last `failureRun` failures ended. It
 * knows the order its calls ended in, which a run counted across instances would not (circuit-breaker.ts).
 */

/** Counts one outcome into the run: a failure extends it, an answer ends it. */
export function extendRun(
  runEnds: number[],
  at: number,
  outcome: BreakerOutcome,
  policy: BreakerPolicy,
): void {
  if (outcome !== "transient") {
    runEnds.length = 0;
    return;
  }
  runEnds.push(at);
  if (runEnds.length > policy.failureRun) runEnds.shift();
}

/** The run's failures that ended after the breaker last closed: one open in between starts it anew. */
export function runSince(runEnds: readonly number[], state: BreakerState): number {
  if (state.status !== "closed" || state.closedAt === null) return runEnds.length;
  const closedAt = state.closedAt;
  return runEnds.filter((at) => at > closedAt).length;
}
