import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ServiceBusClient } from "@azure/service-bus";
import { newKeyRingText } from "../../../laptop/embedded/key-file.js";
import { VirtualClock } from "../../../laptop/simulation/virtual-clock.js";
import { SqliteLease } from "../../../laptop/sqlite/sqlite-lease.js";
import { SqliteMessageQueue } from "../../../laptop/sqlite/sqlite-message-queue.js";
import { SqliteOrdersRepository } from "../../../laptop/sqlite/sqlite-orders-repository.js";
import { SqliteScanJournal } from "../../../laptop/sqlite/sqlite-scan-journal.js";
import { SqliteStateStore } from "../../../laptop/sqlite/sqlite-state-store.js";
import { ServiceBusStandIn } from "../../../laptop/stand-ins/servicebus-broker/index.js";
import { LoggingAlertSink } from "../../../src/adapters/logging/logging-alert-sink.js";
import { QueueStatusNotifier } from "../../../src/adapters/messaging/queue-status-notifier.js";
import { ServiceBusMessageQueue } from "../../../src/adapters/servicebus/service-bus-queue.js";
import { openDatabase } from "../../../src/adapters/sqlite/database.js";
import { loadAzureSettings } from "../../../src/config/azure-settings.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../../src/config/data-protection.js";
import { CONNECTION_NAMES, QUEUE_NAMES } from "../../../src/config/names.js";
import { seededRandom } from "../../../src/domain/backoff.js";
import type { AzureServices } from "../../../src/functions/azure-services.js";
import type { MessageQueue, SendResult } from "../../../src/ports/message-queue.js";
import type { CapturedLog } from "../captured-log.js";
import { WriteLog } from "../write-log.js";
import type { OrderStores } from "./stored.js";

/** Short enough that a broker fault fails a step instead of waiting on the SDK's 60 s defaults. */
const CLIENT_OPTIONS = { retryOptions: { maxRetries: 0, timeoutInMs: 5_000 } };
const ROOT = join(import.meta.dirname, "../../..");

/** The Azure app's services as the submission trigger uses them, with the orders and parking queues on Service Bus. */
export interface ServiceBusApp {
  readonly services: AzureServices;
  readonly stores: OrderStores;
  readonly orders: ServiceBusMessageQueue;
  readonly invalidMessages: ServiceBusMessageQueue;
  /**
   * Puts a JSON document on the orders queue as another client would: its bytes as the body, with a
   * JSON content type, under an id derived from them. Reports it a duplicate when that id was sent before.
   */
  sendDocument(text: string, traceparent: string | null): Promise<SendResult>;
  close(): Promise<void>;
}

/**
 * The in-process AMQP broker with the `orders` and `invalid-messages` queues, reached through the
 * Service Bus adapter; the state store and the orders database on SQLite, as the Azure app's tests
 * stand them in. Status messages go to SQLite queues: they are not what is fuzzed here.
 */
export async function openServiceBusApp(log: CapturedLog): Promise<ServiceBusApp> {
  const clock = new VirtualClock(new Date("2026-01-01T00:00:00.000Z"));
  const broker = await ServiceBusStandIn.start({ clock });
  for (const name of [QUEUE_NAMES.orders, QUEUE_NAMES.invalidMessages]) broker.createQueue(name);
  const client = new ServiceBusClient(broker.connectionString, CLIENT_OPTIONS);
  const onBus = (name: string) =>
    new ServiceBusMessageQueue(client, name, {}, { clock, receiveWaitMs: 5_000 });
  const orders = onBus(QUEUE_NAMES.orders);
  const invalidMessages = onBus(QUEUE_NAMES.invalidMessages);
  const db = openDatabase(":memory:");
  const statusQueues = new Map<string, MessageQueue>();
  const queue = (name: string): MessageQueue => {
    if (name === QUEUE_NAMES.orders) return orders;
    if (name === QUEUE_NAMES.invalidMessages) return invalidMessages;
    const existing = statusQueues.get(name) ?? new SqliteMessageQueue(db, clock, name);
    statusQueues.set(name, existing);
    return existing;
  };
  const sample = JSON.parse(readFileSync(join(ROOT, "local.settings.sample.json"), "utf8")) as {
    Values: Record<string, string>;
  };
  const states = new SqliteStateStore(db);
  const ordersRepository = new SqliteOrdersRepository(db, clock);
  const services: AzureServices = {
    settings: loadAzureSettings({
      ...sample.Values,
      [CONNECTION_NAMES.serviceBus]: broker.connectionString,
      [DATA_PROTECTION_KEYS_SETTING]: newKeyRingText(new Date()),
    }),
    states,
    stateReadModel: states,
    orders: ordersRepository,
    lease: new SqliteLease(db, clock, "supervisor"),
    scanJournal: new SqliteScanJournal(db),
    queue,
    notifier: new QueueStatusNotifier(queue),
    alerts: new LoggingAlertSink(log.logger),
    agent: () => Promise.reject(new Error("no Agent is called while orders are submitted")),
    clock,
    random: seededRandom(1),
    logger: log.logger,
    instanceName: "fuzz-worker",
  };
  const documents = client.createSender(QUEUE_NAMES.orders);
  const documentIds = new Set<string>();
  return {
    services,
    stores: { states, orders: ordersRepository, writes: new WriteLog(db) },
    orders,
    invalidMessages,
    sendDocument: async (text, traceparent) => {
      const messageId = `document:${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
      const duplicate = documentIds.has(messageId);
      documentIds.add(messageId);
      await documents.sendMessages({
        messageId,
        body: Buffer.from(text, "utf8"),
        contentType: "application/json",
        ...(traceparent === null ? {} : { applicationProperties: { traceparent } }),
      });
      return { accepted: duplicate ? 0 : 1, duplicates: duplicate ? 1 : 0 };
    },
    close: async () => {
      await documents.close();
      await orders.close();
      await invalidMessages.close();
      await client.close();
      await broker.close();
      db.close();
    },
  };
}
