import type { InvocationContext } from "@azure/functions";
import type { DurableClient } from "../../ports/durable-client.js";
import type { NudgeStarter } from "../../scheduler/starter.js";
import { createInstanceSweep } from "../../supervisor/retention.js";
import { journaledScan } from "../../supervisor/scan-journal.js";
import { createSupervisor } from "../../supervisor/supervisor.js";
import { type AzureServices, telemetryOf } from "../azure-services.js";

/** The starter's and the Supervisor's timers. */
export function createTimerHandlers(
  services: AzureServices,
  deps: {
    readonly nudgeStarter: NudgeStarter;
    readonly durableOf: (context: InvocationContext) => DurableClient;
  },
) {
  const pipeline = services.settings.pipeline;
  // The durable client of the invocation that runs the scan; the lease lets one scan run at a time.
  let durable: DurableClient | undefined;
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
    interruptions: {
      lookup: async (instanceId) => durable?.getStatus(instanceId),
      lateTimerMs: pipeline.lateTimerMs,
      extensionMs: pipeline.attemptTimeoutMs,
    },
  });
  const supervisor = journaledScan(scan, {
    journal: services.scanJournal,
    clock: services.clock,
    logger: services.logger,
    holder: services.instanceName,
  });
  return {
    async runStarter(_timer: unknown, context: InvocationContext): Promise<void> {
      await deps.nudgeStarter(deps.durableOf(context));
    },
    async runSupervisor(_timer: unknown, context: InvocationContext): Promise<void> {
      durable = deps.durableOf(context);
      try {
        await supervisor();
      } finally {
        durable = undefined;
      }
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
