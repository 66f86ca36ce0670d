import { orderTotalMinor } from "../../domain/order.js";
import { addMilliseconds } from "../../domain/time.js";
import { ORDER_STEPS } from "../../domain/workflow.js";
import type { ActivityImplementations } from "../activity-contract.js";
import type { AttemptRef, OrderActivityContracts, StepStart } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import type { RecordActions } from "./record-actions.js";

/** `beginAttempt`: the attempt's plan, read once so the orchestrator does no I/O. */
export function createAttemptActivities(
  deps: OrderActivityDeps,
  actions: RecordActions,
): Pick<ActivityImplementations<OrderActivityContracts>, "beginAttempt"> {
  return {
    async beginAttempt(input) {
      const ref: AttemptRef = { orderId: input.orderId, instanceId: input.instanceId };
      const record = await deps.states.get(ref.orderId);
      if (!record || record.lockedBy !== ref.instanceId || record.processState !== "Processing") {
        deps.logger.warn("attempt.notOwner", { ...ref, lockedBy: record?.lockedBy ?? null });
        return { owned: false };
      }
      const order = await deps.orders.get(ref.orderId);
      if (!order) throw new Error(`order ${ref.orderId} has a state record but no order row`);
      deps.logger.info("attempt.started", {
        ...ref,
        attempt: record.attempt,
        failureCount: record.failureCount,
      });
      await actions.notify(record, "processing");
      const completed = record.compensationLog.map(({ step, reference }) => ({ step, reference }));
      const pendingSteps = ORDER_STEPS.filter((step) => !completed.some((c) => c.step === step));
      // Reading the plan also starts the first pending step: one update fewer per attempt.
      const firstCompleteBy = addMilliseconds(input.firstDeadlineFrom, deps.settings.stepTimeoutMs);
      const first = pendingSteps[0];
      const firstStart: StepStart = first
        ? actions.startOf(
            await actions.apply(ref, () => actions.startStep(ref, first, firstCompleteBy), "step.started", {
              step: first,
            }),
            first,
          )
        : { ok: false, reason: "refused", detail: "no step left to start" };
      return {
        owned: true,
        pendingSteps,
        completed,
        payloads: {
          reserveInventory: { items: order.items },
          chargePayment: {
            amountMinor: orderTotalMinor(order),
            currency: order.currency,
            customerId: order.customerId,
          },
          arrangeShipment: { customerId: order.customerId, items: order.items },
        },
        firstStart,
        firstCompleteBy,
        stepTimeoutMs: deps.settings.stepTimeoutMs,
        agentMode: deps.settings.agentMode,
        undoCalls: deps.settings.agentCallsPerStep,
      };
    },
  };
}
