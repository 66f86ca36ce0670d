import {
  type BreakerOpening,
  type BreakerPolicy,
  type BreakerState,
  type BreakerStatus,
  windowTotals,
} from "./circuit-breaker.js";

/** A breaker as the operator sees it (`GET /api/stats`, `sas stats`, the dashboard). */
export interface BreakerView {
  readonly operation: string;
  readonly status: BreakerStatus;
  /** When it entered this status; null for a breaker that never opened. */
  readonly since: string | null;
  /** Open or half-open: the time it opened; null when closed. */
  readonly openedAt: string | null;
  /** Open: when the next probe may go out; half-open: when the probe's lease ends; null when closed. */
  readonly nextProbeAt: string | null;
  /**
   * Open or half-open: why it opened, with the counts then (the window that opened it is gone by now);
   * null when closed, or when the state was stored before openings were kept.
   */
  readonly opening: BreakerOpening | null;
  readonly consecutiveFailures: number;
  readonly windowCalls: number;
  readonly windowFailures: number;
}

export function viewOf(
  operation: string,
  state: BreakerState,
  now: number,
  policy: BreakerPolicy,
): BreakerView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const { calls, failures } = windowTotals(state, now, policy);
  const common = { operation, status: state.status, windowCalls: calls, windowFailures: failures };
  switch (state.status) {
    case "closed":
      return {
        ...common,
        since: iso(state.closedAt),
        openedAt: null,
        nextProbeAt: null,
        opening: null,
        consecutiveFailures: state.consecutiveFailures,
      };
    case "open":
      return {
        ...common,
        since: iso(state.nextProbeAt - state.openMs),
        openedAt: iso(state.openedAt),
        nextProbeAt: iso(state.nextProbeAt),
        opening: state.opening ?? null,
        consecutiveFailures: 0,
      };
    case "half-open":
      return {
        ...common,
        since: iso(state.probe.since),
        openedAt: iso(state.openedAt),
        nextProbeAt: iso(state.probe.leaseExpiresAt),
        opening: state.opening ?? null,
        consecutiveFailures: 0,
      };
  }
}
