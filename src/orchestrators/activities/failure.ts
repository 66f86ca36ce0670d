import { errorSummary } from "../../domain/state-record.js";
import type { ActivityImplementations } from "../activity-contract.js";
import type { OrderActivityContracts } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import type { RecordActions } from "./record-actions.js";

/** A permanent fault before any step applied an effect: the order goes to `Error`, with an alert. */
export function createFailureActivities(
  deps: OrderActivityDeps,
  actions: RecordActions,
): Pick<ActivityImplementations<OrderActivityContracts>, "fail" | "deferStep"> {
  return {
    async deferStep({ step, until, callsMade, reason, ...ref }, invocation) {
      const now = actions.now();
      const outcome = await actions.apply(
        ref,
        () => ({
          type: "defer",
          instanceId: ref.instanceId,
          step,
          now,
          // A probe time already past (a slow reply, a clock apart) is as good as now.
          // biome-ignore lint/complexity/useMathMinMax: ISO instants of one format, compared as text
          until: until > now ? until : now,
          callsMade,
          amplification: deps.settings.agentAmplification,
          reason,
        }),
        "order.deferred",
        { step, until, callsMade },
      );
      if (outcome.ok && outcome.changed) await deps.onOrderSettled(invocation.durableClient());
      return actions.result(outcome);
    },
    async fail({ failure, ...ref }, invocation) {
      const outcome = await actions.apply(
        ref,
        () => ({ type: "fail", instanceId: ref.instanceId, now: actions.now(), failure }),
        "order.failed",
        { code: failure.code, step: failure.step },
      );
      if (outcome.ok && outcome.changed) {
        await actions.alert("OrderFailed", ref.orderId, errorSummary(outcome.record));
        await actions.notify(outcome.record, "failed", failure.message);
        await deps.onOrderSettled(invocation.durableClient());
      }
      return actions.result(outcome);
    },
  };
}
