/**
 * An order's state as the storefront knows it from the status messages it received. Messages can arrive
 * twice or out of order, so the state is that of the latest status in the life of the order, never the
 * last one to arrive: later attempts come after earlier ones, and within an attempt a status comes after
 * those listed before it in ORDER_STATUSES (received, processing, completed, failed, compensating, ...).
 */
import { PROCESS_STATES } from "../src/domain/process-state.js";
import { ORDER_STATUSES, type OrderStatus } from "../src/domain/status-message.js";

/** The Scheduler's states, plus `Submitted`: sent to the orders queue, nothing heard yet. */
export const ORDER_STATES = ["Submitted", ...PROCESS_STATES] as const;
export type OrderState = (typeof ORDER_STATES)[number];

const STATE_OF_STATUS: Readonly<Record<OrderStatus, OrderState>> = {
  received: "Pending",
  processing: "Processing",
  completed: "Processed",
  failed: "Error",
  compensating: "Compensating",
  compensated: "Compensated",
  compensationFailed: "CompensationFailed",
};

export function stateOfStatus(status: OrderStatus): OrderState {
  return STATE_OF_STATUS[status];
}

/** A status's place in the life of an order. */
export interface StatusPlace {
  readonly attempt: number;
  readonly status: OrderStatus;
}

export function rankOf(status: OrderStatus): number {
  return ORDER_STATUSES.indexOf(status);
}

/** Negative when `a` comes before `b` in the life of an order, positive after, 0 at the same place. */
export function compareStatusPlaces(a: StatusPlace, b: StatusPlace): number {
  return a.attempt - b.attempt || rankOf(a.status) - rankOf(b.status);
}
