import type { InvocationContext } from "@azure/functions";
import type { DurableClient } from "../../ports/durable-client.js";
import type { NudgeStarter } from "../../scheduler/starter.js";
import { cannotJudge, type OrchestrationLookup } from "../../supervisor/interruptions.js";
import { createInstanceSweep } from "../../supervisor/retention.js";
import { journaledScan } from "../../supervisor/scan-journal.js";
import { createSupervisor } from "../../supervisor/supervisor.js";
import { type AzureServices, telemetryOf } from "../azure-services.js";

type DurableOf = (context: InvocationContext) => DurableClient;

/** The starter's and the Supervisor's timers. */
export function createTimerHandlers(
  services: AzureServices,
  deps: { readonly nudgeStarter: NudgeStarter; readonly durableOf: DurableOf },
) {
  const pipeline = services.settings.pipeline;
  return {
    async runStarter(_timer: unknown, context: InvocationContext): Promise<void> {
      await deps.nudgeStarter(deps.durableOf(context));
    },
    /** One scan, which asks about orchestrations with this invocation's own durable client. */
    async runSupervisor(_timer: unknown, context: InvocationContext): Promise<void> {
      await supervisorWith(services, lookupOf(services, deps.durableOf, context))();
    },
    /**
     * Cosmos DB deletes expired records by their ttl; this purges the orchestration histories they
     * leave, and keeps those of orders in flight or waiting for an operator.
     */
    async runRetention(_timer: unknown, context: InvocationContext): Promise<void> {
      await createInstanceSweep({
        states: services.states,
        durable: deps.durableOf(context),
        clock: services.clock,
        logger: services.logger,
        retentionDays: pipeline.retentionDays,
      })();
    },
  };
}

/**
 * The Supervisor of one run. Built per run (a closure, nothing connects): runs may overlap in one
 * process, and each must ask with its own invocation's durable client, never with another's or none.
 */
function supervisorWith(services: AzureServices, lookup: OrchestrationLookup) {
  const pipeline = services.settings.pipeline;
  const scan = createSupervisor({
    states: services.states,
    lease: services.lease,
    alerts: services.alerts,
    notifier: services.notifier,
    clock: services.clock,
    random: services.random,
    logger: services.logger,
    holder: services.instanceName,
    policy: pipeline.recovery,
    pageSize: pipeline.supervisorPageSize,
    maxPages: pipeline.supervisorMaxPages,
    leaseMs: pipeline.supervisorLeaseMs,
    telemetry: telemetryOf(services),
    interruptions: { lookup, lateTimerMs: pipeline.lateTimerMs, extensionMs: pipeline.attemptTimeoutMs },
  });
  return journaledScan(scan, {
    journal: services.scanJournal,
    clock: services.clock,
    logger: services.logger,
    holder: services.instanceName,
  });
}

/**
 * How the run asks about an attempt's orchestration: the invocation's durable client. Without one,
 * nothing can tell an attempt out of time from a host that was down, so the run says so and every
 * expiry it meets is left, charged to nobody, for a run that can ask (F24-9).
 */
function lookupOf(services: AzureServices, durableOf: DurableOf, context: InvocationContext) {
  let durable: DurableClient;
  try {
    durable = durableOf(context);
  } catch (error) {
    services.logger.error("supervisor.durable-client.missing", {
      holder: services.instanceName,
      invocationId: context.invocationId,
      error,
    });
    return cannotJudge("the Supervisor's invocation has no durable client");
  }
  return (instanceId: string) => durable.getStatus(instanceId);
}
