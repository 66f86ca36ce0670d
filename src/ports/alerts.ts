/**
 * Operator alerts: the events that need a person. Under the Functions host they become log records
 * that alert rules watch; on the embedded host they are logged and kept for the terminal and tests.
 * `BreakerOpened`, `BreakerProbeFailed` and `BreakerClosed` concern a partner operation, not an order:
 * their `orderId` is null.
 */
export const ALERT_KINDS = [
  "InvalidMessage",
  "ConflictingOrder",
  "OrderFailed",
  "RecoveriesExhausted",
  /** An order waited its longest deferral for an open circuit breaker and was parked in `Error`. */
  "PartnerUnavailable",
  "CompensationFailed",
  "BreakerOpened",
  /** The first probe after a breaker opened failed: the partner operation is down, not flaky. */
  "BreakerProbeFailed",
  "BreakerClosed",
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export interface OperatorAlert {
  readonly kind: AlertKind;
  readonly orderId: string | null;
  readonly reason: string;
  readonly at: string;
}

export interface AlertSink {
  raise(alert: OperatorAlert): Promise<void>;
}
