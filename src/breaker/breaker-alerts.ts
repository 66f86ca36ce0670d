import type { BreakerOpening } from "../domain/circuit-breaker.js";
import type { OperatorAlert } from "../ports/alerts.js";
import type { BreakerChange } from "./shared-breaker.js";

/**
 * The operator alert a breaker's change of state calls for: `BreakerOpened` when a closed breaker opens
 * (why, and when the next probe may go out), `BreakerClosed` when a probe's answer closes it. A failed
 * probe (`reopened`) or a probe going out (`half-opened`) is no news to a person: none.
 */
export function breakerAlertOf(change: BreakerChange): OperatorAlert | undefined {
  const { operation, state, previous } = change;
  const at = change.at.toISOString();
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
