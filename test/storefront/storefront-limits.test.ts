import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { startStorefront } from "../../storefront/storefront.js";
import { visitorOf } from "../../storefront/visitor.js";
import { AT, afterThisTest, openShop, placeOrder, type Shop } from "./shop.js";
import { openEventStream } from "./sse-client.js";

const TEA = [{ sku: "TEA-SENCHA", quantity: 1 }];
const from = (address: string) => ({ "x-forwarded-for": address });

async function openStream(shop: Shop, orderId: string, address: string) {
  const stream = await openEventStream(`${shop.storefront.url}/api/orders/${orderId}/events`, from(address));
  afterThisTest(() => stream.close());
  return stream;
}

/** The answer to a stream request: a refusal's body, or (once it is a stream) the status alone. */
async function refusedStream(shop: Shop, orderId: string, address: string) {
  const abort = new AbortController();
  const response = await fetch(`${shop.storefront.url}/api/orders/${orderId}/events`, {
    headers: { accept: "text/event-stream", ...from(address) },
    signal: abort.signal,
  });
  if (response.ok) {
    abort.abort();
    return { status: response.status };
  }
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    body: await response.json(),
  };
}

describe("F24-6: the storefront limits what one visitor, and everyone together, may take", () => {
  it("refuses a visitor's orders past its limit a minute with 429, Retry-After and the reason, counting the address App Service names last", async () => {
    const shop = await openShop({ limits: { visitorOrdersPerMinute: 2, ordersPerMinute: 100 } });
    expect((await placeOrder(shop, TEA, from("203.0.113.7:51234"))).status).toBe(202);
    expect((await placeOrder(shop, TEA, from("203.0.113.7:40001"))).status).toBe(202);
    // What a client writes into the header itself comes first; the front end's entry is the last.
    const third = await placeOrder(shop, TEA, from("192.0.2.1, 203.0.113.7:40002"));
    expect(third).toEqual({
      status: 429,
      retryAfter: "30",
      body: {
        error: "too many orders from your address: at most 2 a minute; try again in 30 s",
        reason: "visitorOrderLimit",
        limit: 2,
        retryAfterSeconds: 30,
      },
    });
    expect((await placeOrder(shop, TEA, from("198.51.100.9"))).status).toBe(202);
    expect(await shop.orders.peek(10)).toHaveLength(3);
    await shop.clock.advance(30_000);
    expect((await placeOrder(shop, TEA, from("203.0.113.7"))).status).toBe(202);
  });

  it("refuses orders past the storefront's limit a minute, from anyone, with 429 and the reason", async () => {
    const shop = await openShop({ limits: { visitorOrdersPerMinute: 1, ordersPerMinute: 3 } });
    // A visitor on the storefront's own machine (npm run smoke) is held to the storefront's limit only.
    expect((await placeOrder(shop)).status).toBe(202);
    expect((await placeOrder(shop)).status).toBe(202);
    expect((await placeOrder(shop, TEA, from("2001:db8:1:2::10"))).status).toBe(202);
    const refused = await placeOrder(shop, TEA, from("198.51.100.9"));
    expect(refused).toMatchObject({
      status: 429,
      retryAfter: "20",
      body: {
        reason: "orderLimit",
        error: "the shop is taking as many orders as it can (3 a minute); try again in 20 s",
      },
    });
    await shop.clock.advance(20_000);
    // An IPv6 visitor is counted by its /64: another address of the same block is the same visitor.
    expect((await placeOrder(shop, TEA, from("[2001:db8:1:2:ffff::1]:443"))).body.reason).toBe(
      "visitorOrderLimit",
    );
    expect((await placeOrder(shop, TEA, from("198.51.100.9"))).status).toBe(202);
  });

  it("refuses an event stream past a visitor's limit with 429 and past the storefront's with 503, each saying why", async () => {
    const shop = await openShop({ limits: { visitorStreams: 1, streams: 2 } });
    const orderId = (await placeOrder(shop)).body.orderId ?? "";
    const first = await openStream(shop, orderId, "203.0.113.7");
    expect(first.status).toBe(200);
    expect(await refusedStream(shop, orderId, "203.0.113.7")).toEqual({
      status: 429,
      retryAfter: "15",
      body: {
        error:
          "your address already follows 1 orders live, the most it may; close one, or the page looks again in 15 s",
        reason: "visitorStreamLimit",
        limit: 1,
        retryAfterSeconds: 15,
      },
    });
    expect((await openStream(shop, orderId, "198.51.100.9")).status).toBe(200);
    expect(await refusedStream(shop, orderId, "192.0.2.44")).toMatchObject({
      status: 503,
      retryAfter: "15",
      body: { reason: "streamLimit", limit: 2 },
    });
    first.close();
    await expect.poll(async () => (await refusedStream(shop, orderId, "192.0.2.44")).status).toBe(200);
  });

  it("refuses to start with a limit out of range, or a visitor's limit above the total, naming each", async () => {
    const start = (limits: Record<string, number>) =>
      startStorefront({
        orders: undefined as never,
        statusQueue: undefined as never,
        statusQueueName: "sf-status",
        orderBookFile: ":memory:",
        port: 0,
        host: "127.0.0.1",
        clock: new VirtualClock(AT),
        logger: new MemoryLogger(),
        limits,
      });
    await expect(start({ streams: 0, visitorOrdersPerMinute: 500, ordersPerMinute: 300 })).rejects.toThrow(
      "invalid storefront limits: limits.streams must be an integer from 1 to 100,000; got 0; limits.visitorOrdersPerMinute (500) must not exceed limits.ordersPerMinute (300)",
    );
  });
});

describe("F24-6: who a visitor is", () => {
  const request = (remoteAddress: string, forwardedFor?: string) =>
    ({
      headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
      socket: { remoteAddress },
    }) as unknown as IncomingMessage;

  it("is the last X-Forwarded-For address, without its port, or else the socket's address", () => {
    expect(visitorOf(request("10.0.0.4", "198.51.100.9:50312"))).toEqual({
      key: "198.51.100.9",
      local: false,
    });
    expect(visitorOf(request("10.0.0.4", "6.6.6.6, 198.51.100.9"))).toEqual({
      key: "198.51.100.9",
      local: false,
    });
    expect(visitorOf(request("::ffff:203.0.113.5"))).toEqual({ key: "203.0.113.5", local: false });
    expect(visitorOf(request("10.0.0.4", "not an address"))).toEqual({ key: "10.0.0.4", local: false });
  });

  it("counts an IPv6 client by its /64, and only a loopback socket with no forwarded address as local", () => {
    expect(visitorOf(request("10.0.0.4", "[2001:DB8:0:7:1::1]:443")).key).toBe("2001:db8:0:7::/64");
    expect(visitorOf(request("2001:db8::7:0:0:1")).key).toBe("2001:db8:0:0::/64");
    expect(visitorOf(request("::ffff:127.0.0.1"))).toEqual({ key: "127.0.0.1", local: true });
    expect(visitorOf(request("::1")).local).toBe(true);
    expect(visitorOf(request("127.0.0.1", "127.0.0.1")).local).toBe(false);
  });
});
