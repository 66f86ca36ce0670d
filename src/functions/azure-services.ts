import type { InvocationContext } from "@azure/functions";
import type { SharedBreaker } from "../breaker/shared-breaker.js";
import type { AzureSettings } from "../config/azure-settings.js";
import type { AgentRequest, AgentResponse } from "../domain/agent-messages.js";
import type { RandomSource } from "../domain/backoff.js";
import type { AlertSink } from "../ports/alerts.js";
import type { Clock } from "../ports/clock.js";
import type { DurableClient } from "../ports/durable-client.js";
import type { Lease } from "../ports/lease.js";
import type { Logger } from "../ports/logger.js";
import type { MessageQueue } from "../ports/message-queue.js";
import type { OrdersRepository } from "../ports/orders-repository.js";
import type { PartnerControls } from "../ports/partner-controls.js";
import type { ScanJournal } from "../ports/scan-journal.js";
import type { StateReadModel } from "../ports/state-read-model.js";
import type { StateStore } from "../ports/state-store.js";
import type { StatusNotifier } from "../ports/status-notifier.js";
import { globalTelemetry, type Telemetry } from "../telemetry/telemetry.js";

/** What the Azure app's handlers are wired to: in Azure, Cosmos DB, SQL, Service Bus and Blob Storage. */
export interface AzureServices {
  readonly settings: AzureSettings;
  /** The state records as the Scheduler, the Agents' activities and the Supervisor read and write them. */
  readonly states: StateStore;
  /** The same records as the operator surface reads them (the orders API, the statistics, the metrics). */
  readonly stateReadModel: StateReadModel;
  readonly orders: OrdersRepository;
  /** The Supervisor's leader-election lease. */
  readonly lease: Lease;
  /** The Supervisor's last scan, kept beside its lease for the statistics any worker serves. */
  readonly scanJournal: ScanJournal;
  /** A sender on the named queue (status queues are named by each order's `replyTo`). */
  queue(name: string): MessageQueue;
  readonly notifier: StatusNotifier;
  readonly alerts: AlertSink;
  readonly agent: (request: AgentRequest) => Promise<AgentResponse>;
  /** The partner operations' circuit breakers (the Agents ask them before each call); absent in tests that need none. */
  readonly breaker?: SharedBreaker;
  /** The partner's controls; absent, over HTTP at PARTNER_URL with PARTNER_ACCESS_KEY. */
  readonly partnerControls?: PartnerControls;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly logger: Logger;
  /** Names this worker process as the Supervisor lease's holder. */
  readonly instanceName: string;
  /** Where spans and metrics go; absent, the global providers (the Azure Monitor distro's, once registered). */
  readonly telemetry?: Telemetry;
  /** Tests replace the Durable Functions client, which only exists under the host. */
  readonly durableClient?: (context: InvocationContext) => DurableClient;
}

/** The services' telemetry: a test's, or the global providers (the Azure Monitor distro's in Azure). */
export function telemetryOf(services: AzureServices): Telemetry {
  return services.telemetry ?? globalTelemetry();
}
