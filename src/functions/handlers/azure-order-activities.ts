import { QUEUE_NAMES } from "../../config/names.js";
import { agentAmplification } from "../../config/settings.js";
import { createOrderActivities, type OrderActivities } from "../../orchestrators/order-activities.js";
import type { JsonValue } from "../../ports/message-queue.js";
import type { NudgeStarter } from "../../scheduler/starter.js";
import { type AzureServices, telemetryOf } from "../azure-services.js";

/** The order orchestration's activities on the Azure services. */
export function createAzureOrderActivities(
  services: AzureServices,
  deps: { readonly nudgeStarter: NudgeStarter },
): OrderActivities {
  const pipeline = services.settings.pipeline;
  const requests = services.queue(QUEUE_NAMES.agentRequests);
  return createOrderActivities({
    states: services.states,
    orders: services.orders,
    notifier: services.notifier,
    alerts: services.alerts,
    clock: services.clock,
    logger: services.logger,
    agent: services.agent,
    sendAgentRequest: async (request) => {
      await requests.send({ messageId: request.requestId, body: request as unknown as JsonValue });
    },
    onOrderSettled: deps.nudgeStarter,
    telemetry: telemetryOf(services),
    settings: {
      stepTimeoutMs: pipeline.stepTimeoutMs,
      agentCallsPerStep: pipeline.agentCallsPerStep,
      agentAmplification: agentAmplification(pipeline),
      agentMode: pipeline.agentMode,
      maxDeferralMs: pipeline.maxDeferralMs,
    },
  });
}
