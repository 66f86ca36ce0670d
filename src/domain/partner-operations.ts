/**
 * One declaration per partner operation: every list of steps, operations, payloads, reference classes
 * and simulated answers in the repo derives from `DECLARED_OPERATIONS` below. docs/architecture.md, "Add a partner
 * operation", walks through a new one.
 */
import type { DataClass } from "./data-classification.js";
import { type Order, orderTotalMinor } from "./order.js";

/** How the simulated partner (partner/) answers one operation. */
interface Simulated {
  /** Its references look like `pay-000042`: the prefix says which operation issued them. */
  readonly prefix: string;
  /** Why it turns the operation down when a permanent fault is injected. */
  readonly rejection: string;
}

/** A step's effect (named as the step) and the operation that undoes it, which compensation calls. */
interface Declaration {
  readonly step: string;
  readonly undo: string;
  /** What the partner is sent for the effect, built by the Agent from the orders database. */
  readonly payload: (order: Order) => Record<string, unknown>;
  /** Each field of `payload`'s result and how sensitive it is (data-classification.ts). */
  readonly payloadClasses: Readonly<Record<string, DataClass>>;
  /** The effect's reference, as the state record keeps it: sealed at rest and kept out of logs unless `none`. */
  readonly referenceClass: DataClass;
  readonly simulated: { readonly effect: Simulated; readonly undo: Simulated };
}

/** In the order the workflow versions run the steps. */
export const DECLARED_OPERATIONS = [
  {
    step: "reserveInventory",
    undo: "releaseInventory",
    payload: ({ items }) => ({ items }),
    payloadClasses: { items: "none" },
    referenceClass: "none",
    simulated: {
      effect: { prefix: "res", rejection: "out-of-stock" },
      undo: { prefix: "rel", rejection: "stock-already-released" },
    },
  },
  {
    step: "chargePayment",
    undo: "refundPayment",
    payload: (order) => ({
      amountMinor: orderTotalMinor(order),
      currency: order.currency,
      customerId: order.customerId,
    }),
    payloadClasses: { amountMinor: "payment", currency: "none", customerId: "personal" },
    // A payment's id is payment data.
    referenceClass: "payment",
    simulated: {
      effect: { prefix: "pay", rejection: "card-declined" },
      undo: { prefix: "ref", rejection: "refund-window-closed" },
    },
  },
  {
    step: "arrangeShipment",
    undo: "cancelShipment",
    payload: ({ customerId, items }) => ({ customerId, items }),
    payloadClasses: { customerId: "personal", items: "none" },
    // A shipment's reference points at a delivery to a person.
    referenceClass: "personal",
    simulated: {
      effect: { prefix: "shp", rejection: "address-undeliverable" },
      undo: { prefix: "cnl", rejection: "already-shipped" },
    },
  },
  {
    step: "notifyCustomer",
    // A notice cannot be unsent: its undo sends the customer a correction.
    undo: "sendCorrection",
    payload: ({ customerId }) => ({ customerId }),
    payloadClasses: { customerId: "personal" },
    // A message sent to a person.
    referenceClass: "personal",
    simulated: {
      effect: { prefix: "ntf", rejection: "recipient-unreachable" },
      undo: { prefix: "cor", rejection: "recipient-unreachable" },
    },
  },
] as const satisfies readonly Declaration[];

type Declared = (typeof DECLARED_OPERATIONS)[number];
export type StepName = Declared["step"];
/** A step's effect operation is named as the step. */
export type EffectOperation = StepName;
export type UndoOperation = Declared["undo"];
export type PartnerOperation = EffectOperation | UndoOperation;
/** One field of every declaration, as a tuple in declaration order. */
type Pluck<T extends readonly Declaration[], K extends "step" | "undo"> = {
  readonly [I in keyof T]: T[I] extends Declaration ? T[I][K] : never;
};
type Field<K extends "step" | "undo"> = Pluck<typeof DECLARED_OPERATIONS, K>;

const BY_STEP = new Map<string, Declared>(DECLARED_OPERATIONS.map((d) => [d.step, d]));
function declared(step: StepName): Declared {
  return BY_STEP.get(step) as Declared;
}

/** Every step any workflow version has, in the order the versions run them. */
export const ORDER_STEPS = DECLARED_OPERATIONS.map((d) => d.step) as unknown as Field<"step">;
export const EFFECT_OPERATIONS: Field<"step"> = ORDER_STEPS;
export const UNDO_OPERATIONS = DECLARED_OPERATIONS.map((d) => d.undo) as unknown as Field<"undo">;
/** The partner's operations: the effects, then their undos. */
export const PARTNER_OPERATIONS = [...EFFECT_OPERATIONS, ...UNDO_OPERATIONS] as const;
/** Each step's effect then its undo, in step order: one circuit breaker each, listed in this order. */
export const OPERATIONS_BY_STEP: readonly PartnerOperation[] = DECLARED_OPERATIONS.flatMap((d) => [
  d.step,
  d.undo,
]);

export function isStepName(value: string): value is StepName {
  return BY_STEP.has(value);
}

export function isPartnerOperation(value: string): value is PartnerOperation {
  return (PARTNER_OPERATIONS as readonly string[]).includes(value);
}

export function isUndoOperation(operation: string): operation is UndoOperation {
  return (UNDO_OPERATIONS as readonly string[]).includes(operation);
}

/** The operation the Agent calls for a step's request: its effect (`do`) or its undo. */
export function operationFor(step: StepName, operation: "do" | "undo"): PartnerOperation {
  return operation === "do" ? step : declared(step).undo;
}

export const UNDO_OF = Object.fromEntries(DECLARED_OPERATIONS.map((d) => [d.step, d.undo])) as Readonly<
  Record<EffectOperation, UndoOperation>
>;
export const EFFECT_OF = Object.fromEntries(DECLARED_OPERATIONS.map((d) => [d.undo, d.step])) as Readonly<
  Record<UndoOperation, EffectOperation>
>;

/**
 * What the partner is asked to do for a step, from the order. The Agent builds it from the orders
 * database when it makes the call: no request, history or log holds it (data-classification.ts).
 */
export function stepPayload(order: Order, step: StepName): Record<string, unknown> {
  return declared(step).payload(order);
}

/** Each step's reference, as the state record keeps it in the step and in the compensation log. */
export const STEP_REFERENCE_CLASSES = Object.fromEntries(
  DECLARED_OPERATIONS.map((d) => [d.step, d.referenceClass]),
) as Readonly<Record<StepName, DataClass>>;

/** Every field of the payloads the Agent sends the partner, for any step or undo. */
export const AGENT_PAYLOAD_FIELD_CLASSES: Readonly<Record<string, DataClass>> = {
  ...Object.fromEntries(DECLARED_OPERATIONS.flatMap((d) => Object.entries(d.payloadClasses))),
  // The reference of the effect to undo: as sensitive as the most sensitive step's reference.
  reference: "payment",
};

/** How the simulated partner answers an operation. */
export function simulatedAnswerOf(operation: PartnerOperation): Simulated {
  if (isStepName(operation)) return declared(operation).simulated.effect;
  return declared(EFFECT_OF[operation]).simulated.undo;
}
