import type { EffectOperation } from "../src/domain/partner-operations.js";
import type { LedgerData } from "./ledger.js";

export interface EffectCounts {
  /** Times the effect was applied for the order. More than 1 is a duplicate. */
  readonly applied: number;
  /** Times one of those effects was undone. */
  readonly undone: number;
}

export interface OrderAtPartner {
  /** Well-formed calls made for the order, whatever their answer. */
  readonly calls: number;
  readonly effects: Readonly<Partial<Record<EffectOperation, EffectCounts>>>;
}

/** What `GET /ledger` answers: the totals, and per order and operation what was applied and undone. */
export interface LedgerReport {
  readonly totals: LedgerData["totals"];
  readonly byOperation: LedgerData["byOperation"];
  readonly byOrder: Readonly<Record<string, OrderAtPartner>>;
}

export function ledgerReport(data: LedgerData): LedgerReport {
  const byOrder: Record<string, { calls: number; effects: Partial<Record<EffectOperation, EffectCounts>> }> =
    Object.create(null);
  for (const [orderId, calls] of data.orderCalls) byOrder[orderId] = { calls, effects: {} };
  for (const effect of data.effectLog) {
    byOrder[effect.orderId] ??= { calls: 0, effects: {} };
    const order = byOrder[effect.orderId] as (typeof byOrder)[string];
    const counts = order.effects[effect.operation] ?? { applied: 0, undone: 0 };
    order.effects[effect.operation] = {
      applied: counts.applied + 1,
      undone: counts.undone + (effect.undone ? 1 : 0),
    };
  }
  return { totals: data.totals, byOperation: data.byOperation, byOrder };
}
