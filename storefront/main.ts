/**
 * The storefront on its own, as App Service runs it in Azure and `sas host` runs it beside the
 * Functions-host emulator: settings from the environment, the two queues on Service Bus (a connection
 * string, or the managed identity with `ServiceBusConnection__fullyQualifiedNamespace`), the order book
 * in `STOREFRONT_DATA`, JSON log lines on stdout. Stops cleanly on SIGINT and SIGTERM.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { SystemClock } from "../src/adapters/clock/system-clock.js";
import { JsonLogger } from "../src/adapters/logging/json-logger.js";
import { createServiceBusClient } from "../src/adapters/servicebus/service-bus-client.js";
import { ServiceBusMessageQueue } from "../src/adapters/servicebus/service-bus-queue.js";
import type { Logger } from "../src/ports/logger.js";
import { loadStorefrontSettings, type StorefrontSettings, StorefrontSettingsError } from "./settings.js";
import { PortInUseError, type Storefront, startStorefront } from "./storefront.js";

/** The order book's file inside `STOREFRONT_DATA`. */
export const ORDER_BOOK_FILE = "orders.sqlite";

/**
 * The orders queue's duplicate-detection window, as infra/queues.json gives it to the queue in Azure
 * (`P1D`; a test keeps the two equal). The outbox resends an order's message no longer than this after
 * the order was placed, so that every copy it sends falls inside the window and is dropped.
 */
export const ORDERS_DUPLICATE_WINDOW_MS = 24 * 60 * 60_000;

export interface StandaloneStorefrontOptions {
  /** Where log lines go (default: JSON lines on stdout). */
  readonly logger?: Logger;
}

/** The storefront on Service Bus queues; closing it closes the queues and the client too. */
export async function startStandaloneStorefront(
  settings: StorefrontSettings,
  options: StandaloneStorefrontOptions = {},
): Promise<Storefront> {
  const clock = new SystemClock();
  const logger = options.logger ?? new JsonLogger((line) => console.log(JSON.stringify(line)), "info");
  mkdirSync(settings.data, { recursive: true });
  const client = createServiceBusClient(
    settings.serviceBus.kind === "connectionString"
      ? { connectionString: settings.serviceBus.connectionString }
      : { fullyQualifiedNamespace: settings.serviceBus.fullyQualifiedNamespace },
  );
  const orders = new ServiceBusMessageQueue(
    client,
    settings.ordersQueue,
    { duplicateDetectionWindowMs: ORDERS_DUPLICATE_WINDOW_MS },
    { clock },
  );
  const statusQueue = new ServiceBusMessageQueue(client, settings.statusQueue, {}, { clock });
  const closeQueues = async () => {
    await Promise.allSettled([orders.close(), statusQueue.close()]);
    await client.close();
  };
  let storefront: Storefront;
  try {
    storefront = await startStorefront({
      orders,
      statusQueue,
      statusQueueName: settings.statusQueue,
      orderBookFile: join(settings.data, ORDER_BOOK_FILE),
      port: settings.port,
      host: settings.host,
      clock,
      logger,
      limits: settings.limits,
    });
  } catch (error) {
    await closeQueues();
    throw error;
  }
  return {
    url: storefront.url,
    close: async () => {
      await storefront.close();
      await closeQueues();
    },
  };
}

/** Runs until SIGINT or SIGTERM; the exit code: 0 after a clean stop, 2 for bad settings or a taken port. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let storefront: Storefront;
  try {
    storefront = await startStandaloneStorefront(loadStorefrontSettings(env));
  } catch (error) {
    if (error instanceof StorefrontSettingsError || error instanceof PortInUseError) {
      console.error(`storefront: ${error.message}`);
      return 2;
    }
    throw error;
  }
  console.error(`storefront: serving ${storefront.url}`);
  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  await storefront.close();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error("storefront: failed to start:", error);
      process.exit(1);
    },
  );
}
