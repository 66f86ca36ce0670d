import type { ActivityImplementations } from "../activity-contract.js";
import type { OrderActivityContracts } from "../order-contracts.js";
import type { RecordActions } from "./record-actions.js";

/** Each step of a compensation: an in-doubt step resolved by `resolveDoubt`, each undo recorded by `compensateStep`. */
export function createUndoActivities(
  actions: RecordActions,
): Pick<ActivityImplementations<OrderActivityContracts>, "resolveDoubt" | "compensateStep"> {
  return {
    async resolveDoubt({ step, applied, reference, ...ref }) {
      return actions.result(
        await actions.apply(
          ref,
          () => ({
            type: "resolveDoubt",
            instanceId: ref.instanceId,
            step,
            now: actions.now(),
            applied,
            reference,
          }),
          "compensation.doubtResolved",
          { step, applied },
        ),
      );
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
  };
}
