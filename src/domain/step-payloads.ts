import { type Order, orderTotalMinor } from "./order.js";
import type { StepName } from "./workflow.js";

/**
 * What the partner is asked to do for each step, from the order. The Agent builds it from the orders
 * database when it makes the call: no request, history or log holds it (data-classification.ts).
 */
export function stepPayload(order: Order, step: StepName): Record<string, unknown> {
  const { customerId, currency, items } = order;
  switch (step) {
    case "reserveInventory":
      return { items };
    case "chargePayment":
      return { amountMinor: orderTotalMinor(order), currency, customerId };
    case "arrangeShipment":
      return { customerId, items };
    case "notifyCustomer":
      return { customerId };
  }
}
