import type { BreakerOpening } from "../domain/circuit-breaker.js";
import type { OperatorAlert } from "../ports/alerts.js";
import type { BreakerChange } from "./breaker-change.js";

/**
 * The operator alert a breaker's change of state calls for: `BreakerOpened` when a closed breaker opens
 * (why, and when the next probe may go out), `BreakerProbeFailed` when the first probe after an opening
 * fails (the partner is down, not flaky: its orders will wait, and past MAX_DEFERRAL_MS be parked),
 * `BreakerClosed` when a probe's answer closes it. Later failed probes of the same opening and a probe
 * going out (`half-opened`) are no news to a person: none. `firstOpenMs` is the policy's first open
 * period (BREAKER_OPEN_MS): a failed probe from a half-open breaker that had waited no longer is the first.
 */
export function breakerAlertOf(change: BreakerChange, firstOpenMs: number): OperatorAlert | undefined {
  const { operation, state, previous } = change;
  const at = change.at.toISOString();
  if (
    change.transition === "reopened" &&
    state.status === "open" &&
    previous.status === "half-open" &&
    previous.openMs <= firstOpenMs
  ) {
    return {
      kind: "BreakerProbeFailed",
      orderId: null,
      reason:
        `the first probe of partner operation ${operation} failed: it is still unavailable since ` +
        `${new Date(state.openedAt).toISOString()}; next probe at ${new Date(state.nextProbeAt).toISOString()}`,
      at,
    };
  }
  if (change.transition === "opened" && state.status === "open") {
    const until = new Date(state.nextProbeAt).toISOString();
    return {
      kind: "BreakerOpened",
      orderId: null,
      reason:
        `the circuit breaker of partner operation ${operation} opened${causeText(change.opening)}; ` +
        `no call to ${operation} before ${until}, then one probe`,
      at,
    };
  }
  if (change.transition === "closed") {
    const openedAt = previous.status === "closed" ? null : new Date(previous.openedAt).toISOString();
    return {
      kind: "BreakerClosed",
      orderId: null,
      reason:
        `the circuit breaker of partner operation ${operation} closed: a probe was answered` +
        `${openedAt ? `, after it had been open since ${openedAt}` : ""}; calls to it go through again`,
      at,
    };
  }
  return undefined;
}

function causeText(opening: BreakerOpening | undefined): string {
  if (!opening) return "";
  if (opening.cause === "run") {
    return ` after ${opening.consecutiveFailures} consecutive transient failures`;
  }
  return (
    `: ${opening.windowFailures} of ${opening.windowCalls} calls in the last ` +
    `${opening.windowMs / 1_000} s failed transiently`
  );
}
