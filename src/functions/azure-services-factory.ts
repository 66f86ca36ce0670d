import { hostname } from "node:os";
import type { ContainerClient } from "@azure/storage-blob";
import { SystemClock } from "../adapters/clock/system-clock.js";
import { CosmosBreakerStore } from "../adapters/cosmos/cosmos-breaker-store.js";
import { createCosmosClient, stateContainers } from "../adapters/cosmos/cosmos-client.js";
import { CosmosStateStore } from "../adapters/cosmos/cosmos-state-store.js";
import { AesGcmFieldCipher } from "../adapters/crypto/aes-gcm-field-cipher.js";
import { JsonLogger } from "../adapters/logging/json-logger.js";
import { LoggingAlertSink } from "../adapters/logging/logging-alert-sink.js";
import { QueueStatusNotifier } from "../adapters/messaging/queue-status-notifier.js";
import { createServiceBusClient } from "../adapters/servicebus/service-bus-client.js";
import { ServiceBusMessageQueue } from "../adapters/servicebus/service-bus-queue.js";
import { SqlOrdersRepository } from "../adapters/sql/sql-orders-repository.js";
import {
  applyMigrations,
  openSqlPool,
  type SqlConnection as SqlPoolConnection,
} from "../adapters/sql/sql-pool.js";
import { createBlobServiceClient } from "../adapters/storage/blob-client.js";
import { BlobLease } from "../adapters/storage/blob-lease.js";
import { BlobScanJournal } from "../adapters/storage/blob-scan-journal.js";
import { createPartnerAgent } from "../agents/partner-agent.js";
import { createPartnerBreaker } from "../breaker/partner-breaker.js";
import { type AzureSettings, HOSTED_ORDERS, hostedOrders } from "../config/azure-settings.js";
import { QUEUE_NAMES } from "../config/names.js";
import type { Lease } from "../ports/lease.js";
import type { MessageQueue } from "../ports/message-queue.js";
import type { OrdersRepository } from "../ports/orders-repository.js";
import { ProtectedStateStore } from "../state/protected-state-store.js";
import type { AzureServices } from "./azure-services.js";

/**
 * The Azure composition root: Cosmos DB for the state store, Azure SQL for orders, Service Bus for
 * queues, a blob lease for the Supervisor. Nothing connects here; each client connects on first use.
 */
export function createAzureServices(settings: AzureSettings): AzureServices {
  const clock = new SystemClock();
  // One JSON object per line on stdout, which the host forwards to Application Insights as traces.
  const logger = new JsonLogger((line) => console.log(JSON.stringify(line)), "info");
  const cosmos = createCosmosClient(settings.cosmos);
  const cosmosStates = new CosmosStateStore(stateContainers(cosmos.database(settings.cosmosDatabase)), {
    retentionSeconds: settings.pipeline.retentionDays * 86_400,
  });
  const states = new ProtectedStateStore(cosmosStates, new AesGcmFieldCipher(settings.dataProtectionKeys));
  const serviceBus = createServiceBusClient(
    settings.serviceBus.kind === "connectionString"
      ? { connectionString: settings.serviceBus.connectionString }
      : { fullyQualifiedNamespace: settings.serviceBus.fullyQualifiedNamespace },
  );
  const queues = new Map<string, MessageQueue>();
  const queue = (name: string): MessageQueue => {
    let found = queues.get(name);
    if (!found) {
      const options =
        name === QUEUE_NAMES.agentRequests
          ? { maxDeliveryCount: settings.pipeline.agentRequestMaxDeliveries }
          : {};
      found = new ServiceBusMessageQueue(serviceBus, name, options, { clock });
      queues.set(name, found);
    }
    return found;
  };
  const random = Math.random;
  const alerts = new LoggingAlertSink(logger);
  // Shared by every instance of the app: one document per partner operation beside the state records.
  const breaker = createPartnerBreaker({
    store: new CosmosBreakerStore(stateContainers(cosmos.database(settings.cosmosDatabase)).records),
    clock,
    logger,
    settings: settings.pipeline.breaker,
    alerts,
  });
  const leases = leaseContainer(settings);
  const orders =
    settings.sql.kind === "hosted" ? handedOrders() : lazyOrders(toPoolConnection(settings.sql), clock);
  return {
    settings,
    states,
    stateReadModel: states,
    orders,
    lease: lazyLease(leases, clock),
    scanJournal: new BlobScanJournal(leases),
    queue,
    notifier: new QueueStatusNotifier(queue),
    alerts,
    breaker,
    agent: createPartnerAgent({
      partnerUrl: settings.partnerUrl,
      clock,
      random,
      logger,
      backoff: settings.pipeline.agentBackoff,
      callTimeoutMs: settings.pipeline.partnerCallTimeoutMs,
      ...(settings.pipeline.partnerAccessKey !== undefined
        ? { accessKey: settings.pipeline.partnerAccessKey }
        : {}),
      orders,
      breaker,
    }),
    clock,
    random,
    logger,
    instanceName: `${process.env.WEBSITE_INSTANCE_ID ?? hostname()}:${process.pid}`,
  };
}

function toPoolConnection(sql: Exclude<AzureSettings["sql"], { kind: "hosted" }>): SqlPoolConnection {
  return sql.kind === "connectionString"
    ? { kind: "connectionString", connectionString: sql.connectionString }
    : { kind: "entra", server: sql.server, database: sql.database };
}

/** Connects, and brings the schema up to date, on the first call; a failed connection is retried next call. */
function lazyOrders(connection: SqlPoolConnection, clock: SystemClock): OrdersRepository {
  let repository: Promise<SqlOrdersRepository> | undefined;
  const get = () => {
    repository ??= (async () => {
      const pool = await openSqlPool(connection);
      await applyMigrations(pool);
      return new SqlOrdersRepository(pool, clock);
    })().catch((error: unknown) => {
      repository = undefined;
      throw error;
    });
    return repository;
  };
  return {
    insertIfAbsent: async (order) => (await get()).insertIfAbsent(order),
    get: async (orderId) => (await get()).get(orderId),
  };
}

/** The orders table the host handed the app (see HOSTED_ORDERS), checked for the repository's methods. */
function handedOrders(): OrdersRepository {
  const handed = hostedOrders() as Partial<OrdersRepository> | undefined;
  if (typeof handed?.insertIfAbsent !== "function" || typeof handed.get !== "function") {
    throw new Error(
      `${String(HOSTED_ORDERS.description)}: the host handed the app no orders repository (insertIfAbsent and get)`,
    );
  }
  return handed as OrdersRepository;
}

/** The container of the Supervisor's lease blob and of its scan journal. */
function leaseContainer(settings: AzureSettings): ContainerClient {
  const storage = settings.storage;
  const blobs = createBlobServiceClient(
    storage.kind === "connectionString"
      ? { kind: "connectionString", connectionString: storage.connectionString }
      : { kind: "identity", blobServiceUri: storage.blobServiceUri },
  );
  return blobs.getContainerClient(settings.leaseContainer);
}

/** The Supervisor's lease blob, in a container created on first use if the deployment did not. */
function lazyLease(container: ContainerClient, clock: SystemClock): Lease {
  const lease = new BlobLease(container, "supervisor", clock);
  let ready: Promise<unknown> | undefined;
  const ensure = () => {
    ready ??= container.createIfNotExists().catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
  return {
    name: lease.name,
    tryAcquire: async (holder, durationMs) => {
      await ensure();
      return lease.tryAcquire(holder, durationMs);
    },
    renew: (grant) => lease.renew(grant),
    release: (grant) => lease.release(grant),
  };
}
