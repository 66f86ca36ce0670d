import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { HEARTBEAT_MS } from "../../storefront/order-events.js";
import { PortInUseError } from "../../storefront/storefront.js";
import { afterThisTest, getJson, openShop, placeOrder, STATUS_QUEUE } from "./shop.js";
import { openEventStream } from "./sse-client.js";

describe("the storefront's HTTP API", () => {
  it("serves its page and the page's files, and nothing else", async () => {
    const shop = await openShop();
    const page = await fetch(`${shop.storefront.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain('<script type="module" src="/store.js">');
    for (const [file, type] of [
      ["store.js", "text/javascript; charset=utf-8"],
      ["store.css", "text/css; charset=utf-8"],
    ]) {
      const response = await fetch(`${shop.storefront.url}/${file}`);
      expect([response.status, response.headers.get("content-type")]).toEqual([200, type]);
    }
    for (const path of ["/package.json", "/dashboard.js", "/%2e%2e/package.json", "/api/nothing"]) {
      expect((await fetch(`${shop.storefront.url}${path}`)).status, path).toBe(404);
    }
  });

  it("answers the catalogue", async () => {
    const shop = await openShop();
    const { status, body } = await getJson(shop, "/api/catalogue");
    expect(status).toBe(200);
    expect(body.currency).toBe("EUR");
    expect(body.products).toContainEqual(
      expect.objectContaining({ sku: "TEA-SENCHA", unitPriceMinor: 1250, name: "Sencha green tea" }),
    );
  });

  it("places an order: the order message on the orders queue, replyTo its own status queue, the order Submitted", async () => {
    const shop = await openShop();
    const placed = await placeOrder(shop);
    expect(placed.status).toBe(202);
    expect(placed.body.delivery).toBe("sent");
    const orderId = placed.body.orderId ?? "";
    expect(orderId).toMatch(/^sf-[0-9a-z]+-[0-9a-f]{12}$/);
    const [message] = await shop.orders.peek(10);
    expect(message?.messageId).toMatch(new RegExp(`^${orderId}:[0-9a-f]{16}$`));
    expect(message?.body).toMatchObject({
      schemaVersion: 1,
      orderId,
      currency: "EUR",
      replyTo: STATUS_QUEUE,
      items: [
        { sku: "TEA-SENCHA", quantity: 2, unitPriceMinor: 1250 },
        { sku: "MUG-STONE", quantity: 1, unitPriceMinor: 1800 },
      ],
    });
    const { status, body } = await getJson(shop, `/api/orders/${orderId}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      orderId,
      state: "Submitted",
      totalMinor: 4300,
      currency: "EUR",
      statuses: [],
      detail: null,
      delivery: "sent",
    });
    expect(shop.logger.events("storefront.order.placed")[0]).toMatchObject({
      orderId,
      replyTo: STATUS_QUEUE,
    });
  });

  it("refuses a bad cart with 400 naming what is wrong, and sends nothing", async () => {
    const shop = await openShop();
    expect(await placeOrder(shop, [{ sku: "NOPE", quantity: 1 }])).toEqual({
      status: 400,
      retryAfter: null,
      body: { error: "invalid cart: items[0].sku: NOPE is not in the catalogue" },
    });
    const notJson = await fetch(`${shop.storefront.url}/api/orders`, { method: "POST", body: "{" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: string }).error).toMatch(/not JSON/);
    const huge = await fetch(`${shop.storefront.url}/api/orders`, {
      method: "POST",
      body: "x".repeat(20_000),
    });
    expect(huge.status).toBe(413);
    expect(await shop.orders.peek(10)).toEqual([]);
  });

  it("follows the statuses it receives: each kept once, the state never moving back", async () => {
    const shop = await openShop();
    const orderId = (await placeOrder(shop)).body.orderId ?? "";
    await shop.tell(orderId, "received", 0);
    await shop.tell(orderId, "completed", 1);
    await shop.tell(orderId, "processing", 1); // late
    await shop.tell(orderId, "completed", 1); // again: a duplicate, dropped by the queue
    await expect
      .poll(async () => (await getJson(shop, `/api/orders/${orderId}`)).body.statuses)
      .toHaveLength(3);
    const { body } = await getJson(shop, `/api/orders/${orderId}`);
    expect(body.state).toBe("Processed");
    expect((body.statuses as { status: string }[]).map((s) => s.status)).toEqual([
      "received",
      "processing",
      "completed",
    ]);
  });

  it("lists the orders asked for by id", async () => {
    const shop = await openShop();
    const first = (await placeOrder(shop)).body.orderId ?? "";
    const second = (await placeOrder(shop, [{ sku: "NOTE-A5", quantity: 3 }])).body.orderId ?? "";
    const { status, body } = await getJson(shop, `/api/orders?ids=${second},unknown-1,${first}`);
    expect(status).toBe(200);
    expect(
      (body.orders as { orderId: string; totalMinor: number }[]).map((o) => [o.orderId, o.totalMinor]),
    ).toEqual([
      [second, 2700],
      [first, 4300],
    ]);
    expect((await getJson(shop, "/api/orders?ids=a%20b")).status).toBe(400);
    expect(await getJson(shop, "/api/orders")).toEqual({ status: 200, body: { orders: [] } });
  });

  it("answers 404 for an order it did not place and 405 for a wrong method", async () => {
    const shop = await openShop();
    expect((await getJson(shop, "/api/orders/ord-elsewhere")).status).toBe(404);
    expect((await getJson(shop, "/api/orders/ord-elsewhere/events")).status).toBe(404);
    const wrong = await fetch(`${shop.storefront.url}/api/catalogue`, { method: "DELETE" });
    expect([wrong.status, wrong.headers.get("allow")]).toEqual([405, "GET"]);
    const put = await fetch(`${shop.storefront.url}/api/orders`, { method: "PUT" });
    expect([put.status, put.headers.get("allow")]).toEqual([405, "GET, POST"]);
  });

  it("refuses to start on a port in use, naming it", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    afterThisTest(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as { port: number }).port;
    const failure = openShop({ port });
    await expect(failure).rejects.toThrow(PortInUseError);
    await expect(failure).rejects.toThrow(`port ${port} on 127.0.0.1 is already in use`);
  });
});

describe("the storefront's event stream", () => {
  it("sends the order as it stands, then each new status, with a heartbeat comment while quiet", async () => {
    const shop = await openShop();
    const orderId = (await placeOrder(shop)).body.orderId ?? "";
    await shop.tell(orderId, "received", 0);
    await expect.poll(async () => (await getJson(shop, `/api/orders/${orderId}`)).body.state).toBe("Pending");

    const stream = await openEventStream(`${shop.storefront.url}/api/orders/${orderId}/events`);
    afterThisTest(() => stream.close());
    expect([stream.status, stream.contentType]).toEqual([200, "text/event-stream; charset=utf-8"]);
    expect(await stream.nextStatus()).toMatchObject({ state: "Pending", statuses: [{ status: "received" }] });

    await shop.tell(orderId, "received", 0); // a duplicate: nobody is told
    await shop.tell(orderId, "processing", 1);
    expect(await stream.nextStatus()).toMatchObject({ state: "Processing" });
    await shop.tell(orderId, "failed", 1, "Http422: out-of-stock; completed: none; in doubt: none");
    expect(await stream.nextStatus()).toMatchObject({
      state: "Error",
      detail: "Http422: out-of-stock; completed: none; in doubt: none",
    });

    await shop.clock.advance(HEARTBEAT_MS);
    expect(await stream.next()).toEqual({ comment: "heartbeat" });
  });

  it("ends open streams when the storefront closes", async () => {
    const shop = await openShop();
    const orderId = (await placeOrder(shop)).body.orderId ?? "";
    const stream = await openEventStream(`${shop.storefront.url}/api/orders/${orderId}/events`);
    expect(await stream.nextStatus()).toMatchObject({ state: "Submitted" });
    await shop.storefront.close();
    await expect(stream.next()).rejects.toThrow(/ended/);
  });
});
