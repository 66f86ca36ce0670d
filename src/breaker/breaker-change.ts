import type { BreakerView } from "../domain/breaker-view.js";
import type { BreakerOpening, BreakerState, BreakerTransition } from "../domain/circuit-breaker.js";
import type { Logger } from "../ports/logger.js";

/** A breaker's change of state, as the instance whose write made it tells its listener. */
export interface BreakerChange {
  readonly operation: string;
  readonly transition: BreakerTransition;
  readonly state: BreakerState;
  /** The state it changed from (a half-open one keeps when it opened). */
  readonly previous: BreakerState;
  /** For `opened`: which threshold the failure that opened it reached, and the counts. */
  readonly opening?: BreakerOpening;
  readonly at: Date;
}

/**
 * Logs a change (`breaker.opened` and `breaker.reopened` as warnings, the others as info) and hands it
 * to the listener; a listener that throws is logged, since the change is written whatever it does.
 */
export function announceChange(
  change: BreakerChange,
  view: BreakerView,
  logger: Logger,
  listener: ((change: BreakerChange) => void) | undefined,
): void {
  const { operation, transition, opening } = change;
  const fields = {
    operation,
    status: view.status,
    openedAt: view.openedAt,
    nextProbeAt: view.nextProbeAt,
    ...(opening ? { cause: opening.cause } : {}),
  };
  if (transition === "opened" || transition === "reopened") logger.warn(`breaker.${transition}`, fields);
  else logger.info(`breaker.${transition}`, fields);
  try {
    listener?.(change);
  } catch (error) {
    logger.error("breaker.listener.failed", { operation, transition, error });
  }
}
