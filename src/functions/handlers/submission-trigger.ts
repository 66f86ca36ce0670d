import type { InvocationContext } from "@azure/functions";
import { QUEUE_NAMES } from "../../config/names.js";
import type { DurableClient } from "../../ports/durable-client.js";
import type { NudgeStarter } from "../../scheduler/starter.js";
import { createSubmissionHandler } from "../../scheduler/submission.js";
import { type AzureServices, telemetryOf } from "../azure-services.js";
import { queueTrigger } from "./queue-trigger.js";

/** Orders queue: submission, then a nudge to the starter once a message is accepted (or was already). */
export function createSubmissionTrigger(
  services: AzureServices,
  deps: {
    readonly nudgeStarter: NudgeStarter;
    readonly durableOf: (context: InvocationContext) => DurableClient;
  },
) {
  const submission = queueTrigger(
    services,
    QUEUE_NAMES.orders,
    createSubmissionHandler({
      orders: services.orders,
      states: services.states,
      notifier: services.notifier,
      alerts: services.alerts,
      clock: services.clock,
      logger: services.logger,
      retryBudgetPerOrder: services.settings.pipeline.retryBudgetPerOrder,
      undoReservePerOrder: services.settings.pipeline.undoReservePerOrder,
      workflowVersion: services.settings.pipeline.workflowVersion,
      telemetry: telemetryOf(services),
    }),
  );
  return {
    async submitOrder(message: unknown, context: InvocationContext): Promise<void> {
      const disposition = await submission(message, context);
      if (disposition.action === "complete") await deps.nudgeStarter(deps.durableOf(context));
    },
  };
}
