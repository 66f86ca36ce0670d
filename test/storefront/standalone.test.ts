import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceBusStandIn } from "../../laptop/stand-ins/servicebus-broker/index.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { QueueStatusNotifier } from "../../src/adapters/messaging/queue-status-notifier.js";
import { createServiceBusClient } from "../../src/adapters/servicebus/service-bus-client.js";
import { ServiceBusMessageQueue } from "../../src/adapters/servicebus/service-bus-queue.js";
import { statusMessageFor } from "../../src/domain/status-message.js";
import { isoDurationMs } from "../../src/domain/time.js";
import {
  ORDER_BOOK_FILE,
  ORDERS_DUPLICATE_WINDOW_MS,
  startStandaloneStorefront,
} from "../../storefront/main.js";
import { loadStorefrontSettings } from "../../storefront/settings.js";

let broker: ServiceBusStandIn;
let data: string;
beforeAll(async () => {
  broker = await ServiceBusStandIn.start();
  broker.createQueue("orders");
  broker.createQueue("storefront-status");
  data = mkdtempSync(join(tmpdir(), "storefront-"));
});
afterAll(async () => {
  await broker.close();
  rmSync(data, { recursive: true, force: true });
});

describe("the stand-alone storefront on Service Bus", () => {
  it("sends its orders to the orders queue and follows them from its status queue", {
    timeout: 30_000,
  }, async () => {
    const settings = loadStorefrontSettings({
      ServiceBusConnection: broker.connectionString,
      STOREFRONT_DATA: data,
      PORT: "0",
      STOREFRONT_HOST: "127.0.0.1",
    });
    const storefront = await startStandaloneStorefront(settings, { logger: new MemoryLogger() });
    const client = createServiceBusClient({ connectionString: broker.connectionString });
    const clock = new SystemClock();
    const orders = new ServiceBusMessageQueue(client, "orders", {}, { clock });
    const statuses = new ServiceBusMessageQueue(client, "storefront-status", {}, { clock });
    try {
      const response = await fetch(`${storefront.url}/api/orders`, {
        method: "POST",
        body: JSON.stringify({ items: [{ sku: "BAG-LINEN", quantity: 1 }] }),
      });
      expect(response.status).toBe(202);
      const { orderId } = (await response.json()) as { orderId: string };
      const [sent] = await orders.peek(10);
      expect(sent?.body).toMatchObject({ orderId, replyTo: "storefront-status" });

      // The Scheduler's side: its notifier onto the storefront's queue.
      const notifier = new QueueStatusNotifier(() => statuses);
      await notifier.notify(
        "storefront-status",
        statusMessageFor({ orderId, attempt: 0 }, "received", new Date().toISOString(), null),
      );
      await expect
        .poll(
          async () =>
            ((await (await fetch(`${storefront.url}/api/orders/${orderId}`)).json()) as { state: string })
              .state,
          {
            timeout: 10_000,
          },
        )
        .toBe("Pending");
    } finally {
      await orders.close();
      await statuses.close();
      await client.close();
      await storefront.close();
    }
    // The order book is a file in STOREFRONT_DATA: a restart finds the order again.
    expect(existsSync(join(data, ORDER_BOOK_FILE))).toBe(true);
  });

  it("F24-3: resends an order no longer than the orders queue in Azure detects duplicates (infra/queues.json)", async () => {
    const queues = JSON.parse(readFileSync(new URL("../../infra/queues.json", import.meta.url), "utf8")) as {
      orders: { requiresDuplicateDetection: boolean; duplicateDetectionHistoryTimeWindow: string };
    };
    expect(queues.orders.requiresDuplicateDetection).toBe(true);
    expect(ORDERS_DUPLICATE_WINDOW_MS).toBe(isoDurationMs(queues.orders.duplicateDetectionHistoryTimeWindow));
    const logger = new MemoryLogger();
    const settings = loadStorefrontSettings({
      ServiceBusConnection: broker.connectionString,
      STOREFRONT_DATA: data,
      PORT: "0",
      STOREFRONT_HOST: "127.0.0.1",
    });
    const storefront = await startStandaloneStorefront(settings, { logger });
    await storefront.close();
    expect(logger.events("storefront.started")[0]?.resendHorizonMs).toBe(ORDERS_DUPLICATE_WINDOW_MS);
  });
});
