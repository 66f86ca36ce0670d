import type { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { LoggingAlertSink } from "../../src/adapters/logging/logging-alert-sink.js";
import type { Lease } from "../../src/ports/lease.js";
import type { StateStore } from "../../src/ports/state-store.js";
import type { InterruptionPolicy } from "../../src/supervisor/interruptions.js";
import { createSupervisor } from "../../src/supervisor/supervisor.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";

export const TEST_LEASE_MS = 30_000;

/** A Supervisor on `states` and `lease`: 3 recoveries, short backoffs, pages of 10, 5 pages a scan. */
export function testSupervisor(deps: {
  readonly states: StateStore;
  readonly lease: Lease;
  readonly clock: VirtualClock;
  readonly holder?: string;
  readonly logger?: MemoryLogger;
  readonly telemetry?: Telemetry;
  readonly interruptions?: InterruptionPolicy;
}) {
  const logger = deps.logger ?? new MemoryLogger();
  return createSupervisor({
    states: deps.states,
    lease: deps.lease,
    alerts: new LoggingAlertSink(logger),
    notifier: { notify: async () => undefined },
    clock: deps.clock,
    random: () => 0,
    logger,
    holder: deps.holder ?? "sup-1",
    policy: {
      maxRecoveries: 3,
      backoff: { baseMs: 1_000, capMs: 5_000 },
      extendedBackoffAfter: 2,
      extendedDelayMs: 10_000,
      onExhausted: "error",
    },
    pageSize: 10,
    maxPages: 5,
    leaseMs: TEST_LEASE_MS,
    ...(deps.telemetry ? { telemetry: deps.telemetry } : {}),
    ...(deps.interruptions ? { interruptions: deps.interruptions } : {}),
  });
}
