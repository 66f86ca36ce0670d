import type { BreakerPolicy } from "../domain/circuit-breaker.js";
import type { AlertSink } from "../ports/alerts.js";
import type { BreakerStore } from "../ports/breaker-store.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import { breakerAlertOf } from "./breaker-alerts.js";
import type { BreakerChange } from "./breaker-change.js";
import { SharedBreaker } from "./shared-breaker.js";

export interface PartnerBreakerDeps {
  readonly store: BreakerStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The policy, on or off, and how long `admit` waits for the store (BREAKER_* settings). */
  readonly settings: BreakerPolicy & { readonly enabled: boolean; readonly admitWaitMs: number };
  readonly alerts: AlertSink;
}

/**
 * The breakers of the partner's operations as a host runs them: one per operation, shared through
 * `store` by every Agent of the app, an operator alert when one opens, when its first probe fails and
 * when it closes.
 */
export function createPartnerBreaker(deps: PartnerBreakerDeps): SharedBreaker {
  const raise = (change: BreakerChange) => {
    const alert = breakerAlertOf(change, deps.settings.openMs);
    if (!alert) return;
    deps.alerts
      .raise(alert)
      .catch((error: unknown) =>
        deps.logger.error("breaker.alert.failed", { operation: change.operation, kind: alert.kind, error }),
      );
  };
  return new SharedBreaker({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger,
    policy: deps.settings,
    enabled: deps.settings.enabled,
    admitWaitMs: deps.settings.admitWaitMs,
    onTransition: raise,
  });
}
