import { compensationFailure, errorSummary, type StateRecord } from "../../domain/state-record.js";
import type { ActivityImplementations } from "../activity-contract.js";
import type { OrderActivityContracts } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import type { RecordActions } from "./record-actions.js";

/**
 * `deferStep`: the partner's circuit breaker is open, so the order waits for its next probe, or, past its
 * longest deferral, is parked for an operator. `fail`: a permanent fault before any step applied an
 * effect; the order goes to `Error`, with an alert.
 */
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
          maxDeferralMs: deps.settings.maxDeferralMs,
        }),
        "order.deferred",
        { step, until, callsMade },
      );
      if (outcome.ok && outcome.changed) {
        await parked(actions, outcome.record);
        await deps.onOrderSettled(invocation.durableClient());
      }
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

/**
 * A deferral that parked its order (its run of deferrals reached MAX_DEFERRAL_MS): one alert, since
 * only the write that parked it changed the record, and the submitter told of the change of state.
 * A deferral that left the order waiting tells nobody: nothing changed for them.
 */
async function parked(actions: RecordActions, record: StateRecord): Promise<void> {
  const detail = record.lastError?.message ?? null;
  if (record.processState === "Error") {
    await actions.alert("PartnerUnavailable", record.orderId, errorSummary(record));
    await actions.notify(record, "failed", detail);
  } else if (record.processState === "CompensationFailed") {
    await actions.alert("CompensationFailed", record.orderId, compensationFailure(record));
    await actions.notify(record, "compensationFailed", detail);
  }
}
