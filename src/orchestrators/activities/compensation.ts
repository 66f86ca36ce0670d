import { compensationFailure } from "../../domain/state-record.js";
import type { ActivityImplementations } from "../activity-contract.js";
import type { OrderActivityContracts } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import type { RecordActions } from "./record-actions.js";
import { undoGrantRequest, undoWork } from "./undo-work.js";

/**
 * A permanent fault after some steps applied their effects: `beginCompensation` (which grants the
 * compensation its calls), then the undos (undo.ts), and `finishCompensation` names the end state.
 */
export function createCompensationActivities(
  deps: OrderActivityDeps,
  actions: RecordActions,
): Pick<ActivityImplementations<OrderActivityContracts>, "beginCompensation" | "finishCompensation"> {
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
          undo: undoGrantRequest(deps),
        }),
        "compensation.started",
        { code: failure.code, step: failure.step },
      );
      if (!outcome.ok) return { ok: false, detail: outcome.reason };
      if (outcome.changed) {
        await actions.notify(outcome.record, "compensating", failure.message);
        await deps.onOrderSettled(invocation.durableClient()); // no longer Processing: its admission slot is free
      }
      return { ok: true, ...undoWork(outcome.record) };
    },

    async finishCompensation({ failure, ...ref }) {
      const command = { type: "finishCompensation", instanceId: ref.instanceId, now: actions.now() } as const;
      const outcome = await actions.apply(
        ref,
        () => (failure ? { ...command, failure } : command),
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
