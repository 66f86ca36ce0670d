import type { Command } from "../../domain/transitions.js";
import type { ActivityImplementations } from "../activity-contract.js";
import type { OrderActivityContracts } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import type { RecordActions } from "./record-actions.js";

/** `advance`: one update records a completed step and starts the next, or finishes the order. */
export function createProgressActivities(
  deps: OrderActivityDeps,
  actions: RecordActions,
): Pick<ActivityImplementations<OrderActivityContracts>, "advance"> {
  return {
    async advance(input, invocation) {
      const { step, next } = input;
      const reference = input.reference ?? null;
      const complete: Command[] = step
        ? [{ type: "completeStep", instanceId: input.instanceId, step, now: actions.now(), reference }]
        : [];
      const then: Command = next
        ? actions.startStep(input, next.step, next.completeBy)
        : { type: "finish", instanceId: input.instanceId, now: actions.now() };
      const outcome = await actions.apply(
        input,
        () => [...complete, then],
        next ? "step.advanced" : "order.processed",
        {
          step,
          reference,
          next: next?.step ?? null,
        },
      );
      if (!outcome.ok) return { ok: false, detail: outcome.reason };
      if (next) return { ok: true, next: actions.startOf(outcome, next.step) };
      if (outcome.laterRefusal) return { ok: false, detail: outcome.laterRefusal.message };
      if (outcome.changed) {
        await actions.notify(outcome.record, "completed");
        await deps.onOrderSettled(invocation.durableClient());
      }
      return { ok: true, next: { ok: false, reason: "refused", detail: "the order is processed" } };
    },
  };
}
