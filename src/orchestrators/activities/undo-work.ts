import { type Order, orderTotalMinor } from "../../domain/order.js";
import { appliedSteps, type StateRecord, stepOf } from "../../domain/state-record.js";
import type { UndoGrantRequest } from "../../domain/transitions.js";
import type { StepName } from "../../domain/workflow.js";
import type { UndoWork } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";

/** The request body of each step: what the partner is asked to do. */
export function stepPayloads(order: Order): Readonly<Record<StepName, Record<string, unknown>>> {
  const { customerId, currency, items } = order;
  return {
    reserveInventory: { items },
    chargePayment: { amountMinor: orderTotalMinor(order), currency, customerId },
    arrangeShipment: { customerId, items },
    notifyCustomer: { customerId },
  };
}

/** What each compensation attempt asks of the budget: the Agent's calls per partner request. */
export function undoGrantRequest(deps: OrderActivityDeps): UndoGrantRequest {
  return {
    callsPerRequest: deps.settings.agentCallsPerStep,
    amplification: deps.settings.agentAmplification,
  };
}

/**
 * What a compensation attempt of `record` undoes, newest first, and the calls its grant gave each
 * partner request. An in-doubt step carries its original request, to be re-sent before the undo.
 */
export async function undoWork(deps: OrderActivityDeps, record: StateRecord): Promise<UndoWork> {
  const applied = [...appliedSteps(record)].reverse();
  const inDoubt = (step: StepName) => stepOf(record, step)?.status === "InDoubt";
  const payloads = applied.some((entry) => inDoubt(entry.step))
    ? stepPayloads(await orderOf(deps, record))
    : null;
  return {
    toUndo: applied.map(({ step, reference }) => ({
      step,
      reference,
      redo: payloads && inDoubt(step) ? payloads[step] : null,
    })),
    allowance: applied[0] ? (stepOf(record, applied[0].step)?.allowance ?? 0) : 0,
  };
}

export async function orderOf(deps: OrderActivityDeps, record: StateRecord): Promise<Order> {
  const order = await deps.orders.get(record.orderId);
  if (!order) throw new Error(`order ${record.orderId} has a state record but no order row`);
  return order;
}
