/** A storefront on SQLite queues and a virtual clock, for the storefront's HTTP tests. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteMessageQueue } from "../../laptop/sqlite/sqlite-message-queue.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { QueueStatusNotifier } from "../../src/adapters/messaging/queue-status-notifier.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { type OrderStatus, statusMessageFor } from "../../src/domain/status-message.js";
import type { MessageQueue, OutgoingMessage } from "../../src/ports/message-queue.js";
import type { StorefrontLimits } from "../../storefront/limits.js";
import { type Storefront, startStorefront } from "../../storefront/storefront.js";

export const AT = "2026-05-01T09:00:00.000Z";
export const STATUS_QUEUE = "sf-status";

export interface Shop {
  readonly storefront: Storefront;
  readonly orders: SqliteMessageQueue;
  readonly statuses: SqliteMessageQueue;
  readonly clock: VirtualClock;
  readonly logger: MemoryLogger;
  /** The Scheduler's side: a status message onto the storefront's queue, then the clock moved so it is received. */
  tell(orderId: string, status: OrderStatus, attempt: number, detail?: string | null): Promise<void>;
}

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** Runs `cleanup` after the current test, after those registered later. */
export function afterThisTest(cleanup: () => Promise<void> | void): void {
  cleanups.push(cleanup);
}

export interface ShopOptions {
  readonly orders?: (queue: SqliteMessageQueue) => MessageQueue;
  readonly port?: number;
  readonly orderBookFile?: string;
  readonly limits?: Partial<StorefrontLimits>;
  readonly clock?: VirtualClock;
}

export async function openShop(options: ShopOptions = {}): Promise<Shop> {
  const db: EmbeddedDatabase = openDatabase(":memory:");
  const clock = options.clock ?? new VirtualClock(AT);
  const logger = new MemoryLogger();
  const orders = new SqliteMessageQueue(db, clock, "orders");
  const statuses = new SqliteMessageQueue(db, clock, STATUS_QUEUE);
  cleanups.push(() => {
    db.close();
  });
  const storefront = await startStorefront({
    orders: options.orders ? options.orders(orders) : orders,
    statusQueue: statuses,
    statusQueueName: STATUS_QUEUE,
    orderBookFile: options.orderBookFile ?? ":memory:",
    port: options.port ?? 0,
    host: "127.0.0.1",
    clock,
    logger,
    ...(options.limits ? { limits: options.limits } : {}),
  });
  cleanups.push(() => storefront.close());
  const notifier = new QueueStatusNotifier(() => statuses);
  return {
    storefront,
    orders,
    statuses,
    clock,
    logger,
    tell: async (orderId, status, attempt, detail = null) => {
      await notifier.notify(
        STATUS_QUEUE,
        statusMessageFor({ orderId, attempt }, status, clock.now().toISOString(), detail),
      );
      await clock.advance(250);
    },
  };
}

export async function placeOrder(
  shop: Shop,
  items: unknown = [
    { sku: "TEA-SENCHA", quantity: 2 },
    { sku: "MUG-STONE", quantity: 1 },
  ],
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${shop.storefront.url}/api/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ items }),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    body: (await response.json()) as { orderId?: string; error?: string; delivery?: string; reason?: string },
  };
}

export async function getJson(shop: Shop, path: string) {
  const response = await fetch(`${shop.storefront.url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The queue, its `send` replaced (the rest as it is). */
export function withSend(
  queue: SqliteMessageQueue,
  send: (message: OutgoingMessage, real: SqliteMessageQueue) => ReturnType<MessageQueue["send"]>,
): MessageQueue {
  return Object.assign(Object.create(queue) as MessageQueue, {
    send: (message: OutgoingMessage) => send(message, queue),
  });
}

/** A send the broker keeps, whose acknowledgement is lost on the way back `times` times. */
export function keptButFailing(times: number) {
  let left = times;
  return (queue: SqliteMessageQueue) =>
    withSend(queue, async (message, real) => {
      const result = await real.send(message);
      if (left-- > 0) throw new Error("the link was detached before the broker's acknowledgement arrived");
      return result;
    });
}

export function tempFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), "storefront-http-"));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}
