/**
 * The partner's operations: four effects, and the undo of each (what compensation calls). A notice
 * cannot be unsent: its undo sends the customer a correction.
 */
export const EFFECT_OPERATIONS = [
  "reserveInventory",
  "chargePayment",
  "arrangeShipment",
  "notifyCustomer",
] as const;
export const UNDO_OPERATIONS = [
  "releaseInventory",
  "refundPayment",
  "cancelShipment",
  "sendCorrection",
] as const;
export const PARTNER_OPERATIONS = [...EFFECT_OPERATIONS, ...UNDO_OPERATIONS] as const;

export type EffectOperation = (typeof EFFECT_OPERATIONS)[number];
export type UndoOperation = (typeof UNDO_OPERATIONS)[number];
export type PartnerOperation = (typeof PARTNER_OPERATIONS)[number];

export const UNDO_OF: Readonly<Record<EffectOperation, UndoOperation>> = {
  reserveInventory: "releaseInventory",
  chargePayment: "refundPayment",
  arrangeShipment: "cancelShipment",
  notifyCustomer: "sendCorrection",
};

export const EFFECT_OF: Readonly<Record<UndoOperation, EffectOperation>> = {
  releaseInventory: "reserveInventory",
  refundPayment: "chargePayment",
  cancelShipment: "arrangeShipment",
  sendCorrection: "notifyCustomer",
};

/** References look like `pay-000042`: the prefix says which operation issued them. */
export const REFERENCE_PREFIX: Readonly<Record<PartnerOperation, string>> = {
  reserveInventory: "res",
  chargePayment: "pay",
  arrangeShipment: "shp",
  releaseInventory: "rel",
  refundPayment: "ref",
  cancelShipment: "cnl",
  notifyCustomer: "ntf",
  sendCorrection: "cor",
};

/** Why the partner turns an operation down when a permanent fault is injected. */
export const REJECTION_REASON: Readonly<Record<PartnerOperation, string>> = {
  reserveInventory: "out-of-stock",
  chargePayment: "card-declined",
  arrangeShipment: "address-undeliverable",
  releaseInventory: "stock-already-released",
  refundPayment: "refund-window-closed",
  cancelShipment: "already-shipped",
  notifyCustomer: "recipient-unreachable",
  sendCorrection: "recipient-unreachable",
};

export function isPartnerOperation(value: string): value is PartnerOperation {
  return (PARTNER_OPERATIONS as readonly string[]).includes(value);
}

export function isUndoOperation(operation: PartnerOperation): operation is UndoOperation {
  return (UNDO_OPERATIONS as readonly string[]).includes(operation);
}
