import { describe, expect, it } from "vitest";
import { STOREFRONT_STATUS_QUEUE, startEmbeddedStorefront } from "../../laptop/embedded/storefront.js";
import { QUEUE_NAMES } from "../../src/config/names.js";
import type { MessageQueue, OutgoingMessage } from "../../src/ports/message-queue.js";
import { startStorefront } from "../../storefront/storefront.js";
import { recordOf, runUntil, type Scenario, scenarioPerTest } from "../pipeline/pipeline-harness.js";

const openScenario = scenarioPerTest();

interface StoreOrder {
  readonly state: string;
  readonly detail: string | null;
  readonly statuses: { status: string; detail: string | null }[];
}

async function withStorefront(s: Scenario, body: (url: string) => Promise<void>): Promise<void> {
  const storefront = await startEmbeddedStorefront({
    pipeline: s.pipeline,
    port: 0,
    host: "127.0.0.1",
    data: ":memory:",
    logger: s.logger,
  });
  try {
    await body(storefront.url);
  } finally {
    await storefront.close();
  }
}

/**
 * A storefront on the pipeline's queues whose first send reaches the orders queue but reports a failure,
 * as a Service Bus send does when the link drops after the broker kept the message.
 */
async function withLostAcknowledgement(s: Scenario, body: (url: string) => Promise<void>): Promise<void> {
  const queue = s.pipeline.queue(QUEUE_NAMES.orders);
  let lost = 1;
  const orders = Object.assign(Object.create(queue) as MessageQueue, {
    send: async (message: OutgoingMessage) => {
      const result = await queue.send(message);
      s.pipeline.nudge(QUEUE_NAMES.orders);
      if (lost-- > 0) throw new Error("the link was detached before the broker's acknowledgement arrived");
      return result;
    },
  });
  const storefront = await startStorefront({
    orders,
    statusQueue: s.pipeline.queue(STOREFRONT_STATUS_QUEUE),
    statusQueueName: STOREFRONT_STATUS_QUEUE,
    orderBookFile: ":memory:",
    port: 0,
    host: "127.0.0.1",
    clock: s.clock,
    logger: s.logger,
  });
  try {
    await body(storefront.url);
  } finally {
    await storefront.close();
  }
}

async function placeOrder(url: string): Promise<string> {
  const response = await fetch(`${url}/api/orders`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      items: [
        { sku: "TEA-SENCHA", quantity: 1 },
        { sku: "KETTLE-GOOSE", quantity: 1 },
      ],
    }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { orderId: string }).orderId;
}

async function orderAt(url: string, orderId: string): Promise<StoreOrder> {
  return (await (await fetch(`${url}/api/orders/${orderId}`)).json()) as StoreOrder;
}

const FINAL = ["Processed", "Error", "Compensated", "CompensationFailed"];

/** Moves the pipeline on until the storefront, from its own status queue alone, knows a final state. */
async function untilFinal(s: Scenario, url: string, orderId: string): Promise<StoreOrder> {
  await runUntil(s, async () => FINAL.includes((await orderAt(url, orderId)).state), { maxMs: 5 * 60_000 });
  return orderAt(url, orderId);
}

describe("the storefront on the embedded pipeline", () => {
  it("places an order through the orders queue and hears it reach Processed on its own status queue", {
    timeout: 60_000,
  }, async () => {
    const s = await openScenario();
    await withStorefront(s, async (url) => {
      const orderId = await placeOrder(url);
      const order = await untilFinal(s, url, orderId);
      expect(order.state).toBe("Processed");
      expect(order.statuses.map((status) => status.status)).toEqual(["received", "processing", "completed"]);
      // The Scheduler's record agrees, and names the storefront's queue as the order's replyTo.
      const record = await recordOf(s, orderId);
      expect([record.processState, record.replyTo]).toEqual(["Processed", STOREFRONT_STATUS_QUEUE]);
      expect(await s.pipeline.queue(STOREFRONT_STATUS_QUEUE).peek(10)).toEqual([]);
    });
  });

  it("hears an order the partner refuses for good end failed, with the partner's reason", {
    timeout: 60_000,
  }, async () => {
    const s = await openScenario();
    s.partner.setFaults({ permanent: 1 });
    await withStorefront(s, async (url) => {
      const orderId = await placeOrder(url);
      const order = await untilFinal(s, url, orderId);
      const record = await recordOf(s, orderId);
      expect(["Error", "Compensated"]).toContain(order.state);
      expect(order.state).toBe(record.processState);
      expect(order.detail).toBe("out-of-stock"); // the partner refuses the first step, reserveInventory
      expect(order.detail).toBe(record.lastError?.message);
    });
  });

  it("F24-3: a send that fails after the queue kept the order: the shopper sees it placed, then Processed, charged once", {
    timeout: 60_000,
  }, async () => {
    const s = await openScenario();
    await withLostAcknowledgement(s, async (url) => {
      const orderId = await placeOrder(url);
      expect((await orderAt(url, orderId)).state).toBe("Submitted");
      const order = await untilFinal(s, url, orderId);
      expect(order.state).toBe("Processed");
      const charges = (s.partner.ledger().effectsByOrder[orderId] ?? []).filter(
        (effect) => effect.operation === "chargePayment",
      );
      expect(charges).toHaveLength(1);
      expect(s.partner.ledger().duplicateEffects).toBe(0);
      expect(await s.pipeline.queue(STOREFRONT_STATUS_QUEUE).deadLetterQueue.peek(10)).toEqual([]);
      expect((await recordOf(s, orderId)).attempt).toBe(1);
    });
  });
});
