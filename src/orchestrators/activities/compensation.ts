import { compensationFailure } from "../../domain/state-record.js";
import type { ActivityImplementations } from "../activity-contract.js";
import type { OrderActivityContracts } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import type { RecordActions } from "./record-actions.js";

/**
 * A permanent fault after some steps applied their effects: `beginCompensation`, then each undo
 * recorded by `compensateStep`, and `finishCompensation` names the end state.
 */
export function createCompensationActivities(
  deps: OrderActivityDeps,
  actions: RecordActions,
): Pick<
  ActivityImplementations<OrderActivityContracts>,
  "beginCompensation" | "compensateStep" | "finishCompensation"
> {
  return {
    async beginCompensation({ failure, completeBy, ...ref }, invocation) {
      const outcome = await actions.apply(
        ref,
        () => ({
          type: "beginCompensation",
          instanceId: ref.instanceId,
          now: actions.now(),
          completeBy,
          failure,
        }),
        "compensation.started",
        { code: failure.code, step: failure.step },
      );
      if (outcome.ok && outcome.changed) {
        await actions.notify(outcome.record, "compensating", failure.message);
        await deps.onOrderSettled(invocation.durableClient()); // no longer Processing: its admission slot is free
      }
      return actions.result(outcome);
    },

    async compensateStep({ step, outcome, failure, ...ref }) {
      const command = {
        type: "compensateStep",
        instanceId: ref.instanceId,
        step,
        now: actions.now(),
        outcome,
      } as const;
      return actions.result(
        await actions.apply(ref, () => (failure ? { ...command, failure } : command), "compensation.step", {
          step,
          outcome,
        }),
      );
    },

    async finishCompensation(ref) {
      const outcome = await actions.apply(
        ref,
        () => ({ type: "finishCompensation", instanceId: ref.instanceId, now: actions.now() }),
        "compensation.finished",
      );
      if (!outcome.ok) return { state: "notOwner" };
      const { record, changed } = outcome;
      if (changed && record.processState === "CompensationFailed") {
        await actions.alert("CompensationFailed", ref.orderId, compensationFailure(record));
      }
      if (changed)
        await actions.notify(
          record,
          record.processState === "Compensated" ? "compensated" : "compensationFailed",
        );
      return { state: record.processState };
    },
  };
}
