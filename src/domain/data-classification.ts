import type { OrderMessage } from "./order.js";
import type { StepName } from "./workflow.js";

/**
 * How sensitive a field is. `personal` identifies or points at a person; `payment` identifies a payment
 * or carries its amount. Both are kept encrypted at rest in the state store and out of logs; `none` is
 * neither.
 */
export const DATA_CLASSES = ["personal", "payment", "none"] as const;
export type DataClass = (typeof DATA_CLASSES)[number];

export function isProtected(dataClass: DataClass): boolean {
  return dataClass !== "none";
}

/** Every field of the order message (the public contract). */
export const ORDER_FIELD_CLASSES: Readonly<Record<keyof OrderMessage, DataClass>> = {
  schemaVersion: "none",
  orderId: "none",
  customerId: "personal",
  currency: "none",
  items: "none",
  replyTo: "none",
};

/** Every field of the payloads the Agent sends the partner, for any step. */
export const AGENT_PAYLOAD_FIELD_CLASSES: Readonly<Record<string, DataClass>> = {
  items: "none",
  currency: "none",
  amountMinor: "payment",
  customerId: "personal",
  // The reference of the effect to undo: classed as the reference of its step, below.
  reference: "payment",
};

/**
 * The partner's reference for each step's effect, as the state record keeps it in the step and in the
 * compensation log: a payment's id is payment data; a shipment's points at a delivery to a person.
 */
export const STEP_REFERENCE_CLASSES: Readonly<Record<StepName, DataClass>> = {
  reserveInventory: "none",
  chargePayment: "payment",
  arrangeShipment: "personal",
  // A message sent to a person.
  notifyCustomer: "personal",
};
