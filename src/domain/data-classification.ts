import type { OrderMessage } from "./order.js";

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

// The payloads the Agent sends the partner and the references it gets back are classed where each
// partner operation is declared: partner-operations.ts (AGENT_PAYLOAD_FIELD_CLASSES, STEP_REFERENCE_CLASSES).
