import type { InvocationContext } from "@azure/functions";
import { durableClientOf } from "../adapters/functions-host/durable-client.js";
import { createOperatorCommands } from "../operator/operator-commands.js";
import type { DurableClient } from "../ports/durable-client.js";
import { createStarterRuns } from "../scheduler/starter.js";
import { observeOrderStates, registerBreakerGauge } from "../telemetry/instruments.js";
import { type AzureServices, telemetryOf } from "./azure-services.js";
import { createAgentQueueHandlers } from "./handlers/agent-queues.js";
import { createAzureOrderActivities } from "./handlers/azure-order-activities.js";
import { createOrdersHttpHandlers } from "./handlers/orders-http.js";
import { createPartnerHttpHandlers } from "./handlers/partner-http.js";
import { createSubmissionTrigger } from "./handlers/submission-trigger.js";
import { createTimerHandlers } from "./handlers/timers.js";

export type AzureApp = ReturnType<typeof createAzureApp>;

/**
 * The Azure app's composition: the shared handlers wired to the Azure services, built once when the
 * host loads the app, one group per kind of trigger. Nothing connects here. A durable client is taken
 * from each invocation's own binding and passed down; the starter runs one at a time in this process,
 * nudged by its timer, by accepted orders and by orders that leave `Processing`.
 */
export function createAzureApp(services: AzureServices) {
  const pipeline = services.settings.pipeline;
  const durableOf = (context: InvocationContext): DurableClient =>
    services.durableClient?.(context) ?? durableClientOf(context);
  const starter = createStarterRuns({
    states: services.states,
    clock: services.clock,
    logger: services.logger,
    attemptTimeoutMs: pipeline.attemptTimeoutMs,
    stepTimeoutMs: pipeline.stepTimeoutMs,
    maxInFlight: pipeline.maxInFlight,
    pageSize: pipeline.starterPageSize,
    startRetryDelayMs: pipeline.recovery.backoff.baseMs,
    telemetry: telemetryOf(services),
  });
  const nudgeStarter = starter.nudge;
  // Every instance reports the same store-wide counts; a metrics backend takes the last value.
  observeOrderStates(telemetryOf(services), () => services.stateReadModel.countByState());
  // Each instance reports the breakers as it last read them (within a second or so of the store).
  const { breaker } = services;
  if (breaker) registerBreakerGauge(telemetryOf(services), () => breaker.knownStatuses());
  const operator = createOperatorCommands({
    states: services.states,
    clock: services.clock,
    logger: services.logger,
  });
  return {
    durableOf,
    submission: createSubmissionTrigger(services, { nudgeStarter, durableOf }),
    timers: createTimerHandlers(services, { nudgeStarter, durableOf }),
    agentQueues: createAgentQueueHandlers(services, { durableOf }),
    ordersHttp: createOrdersHttpHandlers(services, operator),
    partnerHttp: createPartnerHttpHandlers(services),
    activities: createAzureOrderActivities(services, { nudgeStarter }),
    operator,
  };
}
