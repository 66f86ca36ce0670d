import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { OutgoingMessage } from "../../src/ports/message-queue.js";
import { FIRST_RESEND_MS } from "../../storefront/outbox.js";
import { getJson, keptButFailing, openShop, placeOrder, tempFolder, withSend } from "./shop.js";

describe("F24-3: every placed order reaches the orders queue once, whatever its send answered", () => {
  it("tells the shopper an order whose send failed after the queue kept it is placed, and resends the same message, dropped as a duplicate", async () => {
    const shop = await openShop({ orders: keptButFailing(1) });
    const placed = await placeOrder(shop);
    expect(placed.status).toBe(202);
    const orderId = placed.body.orderId ?? "";
    expect(placed.body.delivery).toBe("sending");
    expect((await getJson(shop, `/api/orders/${orderId}`)).body).toMatchObject({
      orderId,
      state: "Submitted",
      delivery: "sending",
    });
    const [kept] = await shop.orders.peek(10);
    expect(shop.logger.events("storefront.order.sendFailed")[0]).toMatchObject({
      orderId,
      messageId: kept?.messageId,
      attempt: 1,
      retryInMs: FIRST_RESEND_MS,
    });

    await shop.clock.advance(FIRST_RESEND_MS);
    await expect.poll(() => shop.logger.events("storefront.order.sent")).toHaveLength(1);
    expect(shop.logger.events("storefront.order.sent")[0]).toMatchObject({
      orderId,
      messageId: kept?.messageId,
      attempt: 2,
      duplicate: true,
    });
    expect((await shop.orders.peek(10)).map((m) => m.messageId)).toEqual([kept?.messageId]);
    expect((await getJson(shop, `/api/orders/${orderId}`)).body.delivery).toBe("sent");
  });

  it("records a status that arrives before any send was acknowledged, rather than dead-letter it, and stops resending", async () => {
    const shop = await openShop({ orders: keptButFailing(1) });
    const orderId = (await placeOrder(shop)).body.orderId ?? "";
    await shop.tell(orderId, "received", 0); // the Scheduler took the kept copy
    await expect
      .poll(async () => (await getJson(shop, `/api/orders/${orderId}`)).body)
      .toMatchObject({ state: "Pending", delivery: "sent" });
    expect(await shop.statuses.deadLetterQueue.peek(10)).toEqual([]);
    await shop.clock.advance(FIRST_RESEND_MS * 4);
    expect(shop.logger.events("storefront.order.sent")).toEqual([]);
    expect(await shop.orders.peek(10)).toHaveLength(1);
  });

  it("resends until the queue acknowledges, waiting twice as long each time", async () => {
    let refusals = 3;
    const shop = await openShop({
      orders: (queue) =>
        withSend(queue, (message, real) =>
          refusals-- > 0 ? Promise.reject(new Error("the namespace is unreachable")) : real.send(message),
        ),
    });
    const orderId = (await placeOrder(shop)).body.orderId ?? "";
    await shop.clock.advance(FIRST_RESEND_MS);
    await expect.poll(() => shop.logger.events("storefront.order.sendFailed")).toHaveLength(2);
    await shop.clock.advance(FIRST_RESEND_MS * 2);
    await expect.poll(() => shop.logger.events("storefront.order.sendFailed")).toHaveLength(3);
    expect(shop.logger.events("storefront.order.sendFailed").map((line) => line.retryInMs)).toEqual([
      FIRST_RESEND_MS,
      FIRST_RESEND_MS * 2,
      FIRST_RESEND_MS * 4,
    ]);
    await shop.clock.advance(FIRST_RESEND_MS * 4);
    await expect.poll(async () => (await shop.orders.peek(10)).length).toBe(1);
    expect(shop.logger.events("storefront.order.sent")[0]).toMatchObject({
      orderId,
      attempt: 4,
      duplicate: false,
    });
  });

  it("sends, when the storefront starts again, an order placed just before it died in the middle of the send", async () => {
    const file = join(tempFolder(), "orders.sqlite");
    const sent: OutgoingMessage[] = [];
    // The process dies while the send is on its way: it never answers, and nothing reached the queue.
    const dying = await openShop({
      orderBookFile: file,
      orders: (queue) =>
        withSend(queue, (message) => {
          sent.push(message);
          return new Promise(() => {});
        }),
    });
    const checkout = placeOrder(dying).catch(() => undefined);
    await expect.poll(() => sent).toHaveLength(1);
    await dying.storefront.close();
    await checkout;

    const again = await openShop({ orderBookFile: file });
    const orderId = (sent[0]?.body as { orderId?: string } | undefined)?.orderId;
    await expect
      .poll(async () => (await again.orders.peek(10)).map((m) => m.messageId))
      .toEqual([sent[0]?.messageId]);
    expect((await again.orders.peek(10))[0]?.body).toEqual(sent[0]?.body);
    expect((await getJson(again, `/api/orders/${orderId}`)).body).toMatchObject({
      state: "Submitted",
      delivery: "sent",
    });
    expect(again.logger.events("storefront.order.sent")[0]).toMatchObject({ orderId, attempt: 1 });
  });

  it("gives up past the orders queue's duplicate-detection window, and says so on the order", async () => {
    const shop = await openShop({
      orders: (queue) => withSend(queue, () => Promise.reject(new Error("the namespace is unreachable"))),
    });
    const orderId = (await placeOrder(shop)).body.orderId ?? "";
    const windowMs = shop.orders.options.duplicateDetectionWindowMs;
    for (let elapsed = 0; elapsed <= windowMs; elapsed += 30_000) await shop.clock.advance(30_000);
    await expect.poll(() => shop.logger.events("storefront.order.sendAbandoned")).toHaveLength(1);
    expect(shop.logger.events("storefront.order.sendAbandoned")[0]).toMatchObject({
      orderId,
      horizonMs: windowMs,
    });
    expect((await getJson(shop, `/api/orders/${orderId}`)).body).toMatchObject({
      state: "Submitted",
      delivery: "notSent",
    });
    // A copy that did reach the Scheduler still has its statuses recorded.
    await shop.tell(orderId, "received", 0);
    await expect.poll(async () => (await getJson(shop, `/api/orders/${orderId}`)).body.state).toBe("Pending");
    expect(await shop.statuses.deadLetterQueue.peek(10)).toEqual([]);
  });
});

describe("F24-10: the storefront checks what it reads back from its order book", () => {
  it("answers 500 naming the order, and logs the row and its fields, for an order whose stored lines are not lines", async () => {
    const file = join(tempFolder(), "orders.sqlite");
    const first = await openShop({ orderBookFile: file });
    const orderId = (await placeOrder(first)).body.orderId ?? "";
    await first.storefront.close();
    const db = new Database(file);
    db.prepare("UPDATE storefront_orders SET items = ? WHERE order_id = ?").run('[{"sku":7}]', orderId);
    db.close();

    const shop = await openShop({ orderBookFile: file });
    const { status, body } = await getJson(shop, `/api/orders/${orderId}`);
    expect(status).toBe(500);
    expect(body.error).toBe(`order ${orderId} cannot be read back; it has been logged for the shop's staff`);
    expect(shop.logger.events("storefront.orderBook.unreadableRow")[0]).toMatchObject({
      table: "storefront_orders",
      key: orderId,
      error: expect.stringMatching(/items\[0\]\.sku: must be a string; items\[0\]\.name: is required/),
    });
    expect((await getJson(shop, `/api/orders?ids=${orderId}`)).body).toEqual({ orders: [] });
  });
});
