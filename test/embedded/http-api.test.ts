import { request } from "node:http";
import { connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type HttpApi, type OrdersApiBackend, startHttpApi } from "../../laptop/embedded/http-api.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { MAX_ORDER_MESSAGE_BYTES } from "../../src/domain/order.js";
import type { StoredStateRecord } from "../../src/domain/state-record.js";
import type { JsonValue, SendResult } from "../../src/ports/message-queue.js";
import { pendingRecord } from "../support/records.js";

/** An in-memory backend: records by order id, the bodies posted, and a switch to make it fail. */
class FakeBackend implements OrdersApiBackend {
  readonly records = new Map<string, StoredStateRecord>();
  readonly posted: JsonValue[] = [];
  readonly lookups: string[] = [];
  failing = false;

  async post(body: JsonValue): Promise<SendResult> {
    if (this.failing) throw new Error("orders queue unavailable");
    this.posted.push(body);
    return { accepted: 1, duplicates: 0 };
  }

  async getRecord(orderId: string): Promise<StoredStateRecord | undefined> {
    this.lookups.push(orderId);
    if (this.failing) throw new Error("state store unavailable");
    return this.records.get(orderId);
  }
  // The list and the operator routes have their own suite (test/contracts/operator-api.contract.ts).
  readonly listRecords = () => Promise.reject(new Error("not used here"));
  readonly countByState = () => Promise.reject(new Error("not used here"));
  readonly stats = {
    oldestPending: () => Promise.reject(new Error("not used here")),
    messages: () => Promise.reject(new Error("not used here")),
    lastScan: () => Promise.reject(new Error("not used here")),
    throughput: () => Promise.reject(new Error("not used here")),
    finishedLastHour: () => Promise.reject(new Error("not used here")),
    workflowVersions: () => Promise.reject(new Error("not used here")),
  };
  readonly maxInFlight = 1;
  pending = 0;
  maxPending = 10;
  async countPending(): Promise<number> {
    return this.pending;
  }
  readonly operator = {
    resubmit: () => Promise.reject(new Error("not used here")),
    compensate: () => Promise.reject(new Error("not used here")),
  };
}

function orderMessage(overrides: Record<string, JsonValue> = {}): Record<string, JsonValue> {
  return {
    schemaVersion: 1,
    orderId: "ord-1",
    customerId: "cust-1",
    currency: "EUR",
    items: [{ sku: "SKU-1", quantity: 2, unitPriceMinor: 1299 }],
    replyTo: "status-shop-web",
    ...overrides,
  };
}

let backend: FakeBackend;
let logger: MemoryLogger;
let api: HttpApi;

beforeEach(async () => {
  backend = new FakeBackend();
  logger = new MemoryLogger();
  api = await startHttpApi({ backend, logger, port: 0 });
});

afterEach(async () => {
  await api.close();
});

function post(body: string): Promise<Response> {
  return fetch(`${api.url}/api/orders`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body,
  });
}

/** Posts `chunks` without ending the request, and resolves with the answer's status and content type. */
function unfinishedPost(
  headers: Record<string, string>,
  chunks: string[],
): Promise<{ status: number; contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}/api/orders`, { method: "POST", headers }, (res) => {
      resolve({ status: res.statusCode ?? 0, contentType: res.headers["content-type"] ?? "" });
      res.resume();
      req.destroy();
    });
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
  });
}

async function json(response: Response): Promise<Record<string, unknown>> {
  expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
  return (await response.json()) as Record<string, unknown>;
}

describe("POST /api/orders", () => {
  it("refuses a valid order with 429 and Retry-After while the Pending backlog is at MAX_PENDING, and queues nothing", async () => {
    backend.pending = backend.maxPending;
    const refused = await post(JSON.stringify(orderMessage()));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await json(refused)).toEqual({ error: "too many pending orders", pending: 10, maxPending: 10 });
    expect(backend.posted).toEqual([]);
    expect((await post("{}")).status).toBe(400);
    backend.pending = backend.maxPending - 1;
    expect((await post(JSON.stringify(orderMessage()))).status).toBe(202);
  });

  it("queues a valid order message as sent and answers 202 with its status URL", async () => {
    const message = orderMessage();
    const response = await post(JSON.stringify(message));

    expect(response.status).toBe(202);
    expect(response.headers.get("location")).toBe("/api/orders/ord-1");
    expect(await json(response)).toEqual({
      orderId: "ord-1",
      status: "accepted",
      statusUrl: "/api/orders/ord-1",
    });
    expect(backend.posted).toEqual([message]);
  });

  it("refuses an invalid message with 400, naming every broken field, and queues nothing", async () => {
    const message = orderMessage({
      currency: "eur",
      items: [{ sku: "SKU-1", quantity: 0, unitPriceMinor: 1299 }],
    });
    const response = await post(JSON.stringify(message));

    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.error).toBe("invalid order message");
    const issues = body.issues as { field: string; rule: string; message: string }[];
    expect(issues.map((issue) => issue.field).sort()).toEqual(["currency", "items[0].quantity"]);
    for (const issue of issues) {
      expect(issue.rule).toMatch(/\S/);
      expect(issue.message).toMatch(/\S/);
    }
    expect(backend.posted).toEqual([]);
  });

  it("refuses malformed JSON with 400", async () => {
    const response = await post('{"schemaVersion": 1, "orderId": ');

    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.error).toBe("invalid order message");
    expect(body.issues).toEqual([expect.objectContaining({ field: "(message)", rule: "json" })]);
    expect(backend.posted).toEqual([]);
  });

  it("accepts a message of exactly 64 KiB and refuses one byte more with 413", async () => {
    const text = JSON.stringify(orderMessage());
    const padded = text + " ".repeat(MAX_ORDER_MESSAGE_BYTES - text.length);

    const atLimit = await post(padded);
    expect(atLimit.status).toBe(202);
    await atLimit.body?.cancel();

    const overLimit = await post(`${padded} `);
    expect(overLimit.status).toBe(413);
    expect(await json(overLimit)).toEqual({
      error: "order message too large",
      maxBytes: MAX_ORDER_MESSAGE_BYTES,
    });
    expect(backend.posted).toHaveLength(1);
  });

  it("answers 413 for a chunked body past 64 KiB without waiting for the rest of it", {
    timeout: 5_000,
  }, async () => {
    // 64 KiB and one byte, and the request never ends: the server must not wait for the end.
    const answer = await unfinishedPost({}, [" ".repeat(MAX_ORDER_MESSAGE_BYTES), "{"]);

    expect(answer).toEqual({ status: 413, contentType: "application/json; charset=utf-8" });
    expect(backend.posted).toEqual([]);
  });

  it("answers 413 from a Content-Length past 64 KiB before reading the body", {
    timeout: 5_000,
  }, async () => {
    const headers = { "Content-Length": String(MAX_ORDER_MESSAGE_BYTES + 1) };
    const answer = await unfinishedPost(headers, ["{"]);

    expect(answer).toEqual({ status: 413, contentType: "application/json; charset=utf-8" });
  });

  it("answers 503 and logs the failure when the backend cannot take the message", async () => {
    backend.failing = true;
    const response = await post(JSON.stringify(orderMessage()));

    expect(response.status).toBe(503);
    expect((await json(response)).error).toBe("service unavailable");
    expect(logger.events("http.backend-failed")).toEqual([
      expect.objectContaining({ level: "error", operation: "post", orderId: "ord-1" }),
    ]);
  });
});

describe("GET /api/orders/{orderId}", () => {
  it("returns the state record without its _etag", async () => {
    const record = pendingRecord("ord-1");
    backend.records.set("ord-1", { ...record, _etag: "etag-1" });

    const response = await fetch(`${api.url}/api/orders/ord-1`);

    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).not.toHaveProperty("_etag");
    expect(body).toEqual(record);
  });

  it("answers 404 naming the order when it is unknown", async () => {
    const response = await fetch(`${api.url}/api/orders/ord-404`);

    expect(response.status).toBe(404);
    expect(await json(response)).toEqual({ error: "order not found", orderId: "ord-404" });
  });

  it("URL-decodes the order id", async () => {
    backend.records.set("ord:1", { ...pendingRecord("ord:1"), _etag: "etag-1" });

    const response = await fetch(`${api.url}/api/orders/ord%3A1`);

    expect(response.status).toBe(200);
    expect((await json(response)).orderId).toBe("ord:1");
    expect(backend.lookups).toEqual(["ord:1"]);
  });

  it("refuses an order id longer than 64 characters with 400 without asking the backend", async () => {
    const atLimit = await fetch(`${api.url}/api/orders/${"a".repeat(64)}`);
    expect(atLimit.status).toBe(404);
    await atLimit.body?.cancel();

    const overLimit = await fetch(`${api.url}/api/orders/${"a".repeat(65)}`);
    expect(overLimit.status).toBe(400);
    expect((await json(overLimit)).error).toBe("invalid order id");
    expect(backend.lookups).toEqual(["a".repeat(64)]);
  });

  it("answers 503 when the backend cannot read the record", async () => {
    backend.failing = true;
    const response = await fetch(`${api.url}/api/orders/ord-1`);

    expect(response.status).toBe(503);
    expect((await json(response)).error).toBe("service unavailable");
  });
});

describe("routing", () => {
  it("answers 404 in JSON for an unknown path", async () => {
    const response = await fetch(`${api.url}/api/nothing-here`);

    expect(response.status).toBe(404);
    expect((await json(response)).error).toBe("not found");
  });

  it("answers 405 with an Allow header for a wrong method", async () => {
    const list = await fetch(`${api.url}/api/orders`, { method: "PUT" });
    expect(list.status).toBe(405);
    expect(list.headers.get("allow")).toBe("GET, POST");
    expect((await json(list)).error).toBe("method not allowed");

    const remove = await fetch(`${api.url}/api/orders/ord-1`, { method: "DELETE" });
    expect(remove.status).toBe(405);
    expect(remove.headers.get("allow")).toBe("GET");
    await remove.body?.cancel();
    expect(backend.lookups).toEqual([]);
  });

  it("answers a request it cannot parse in JSON too", async () => {
    const { port } = api;
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write("NOT HTTP AT ALL\r\n\r\n"));
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString("utf8");
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });

    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
  });

  it("logs every request with method, path, status and duration", async () => {
    const response = await fetch(`${api.url}/api/orders/ord-404?verbose=1`);
    await response.body?.cancel();

    await vi.waitFor(() =>
      expect(logger.events("http.request")).toEqual([
        expect.objectContaining({
          method: "GET",
          path: "/api/orders/ord-404",
          status: 404,
          durationMs: expect.any(Number),
        }),
      ]),
    );
  });

  it("closes promptly with a connection still waiting for its answer", async () => {
    let asked = false;
    backend.getRecord = () => {
      asked = true;
      return new Promise<never>(() => {});
    };
    const outcome = fetch(`${api.url}/api/orders/ord-1`).then(
      () => "answered",
      () => "connection closed",
    );
    await vi.waitFor(() => expect(asked).toBe(true));

    const started = Date.now();
    await api.close();

    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await outcome).toBe("connection closed");
    await expect(fetch(`${api.url}/api/orders/ord-1`)).rejects.toThrow();
  });
});

/** A GET of `path` as written: fetch would resolve its `..` segments before sending it. */
function rawGet(path: string): Promise<{ status: number; contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}${path}`, (res) => {
      resolve({ status: res.statusCode ?? 0, contentType: res.headers["content-type"] ?? "" });
      res.resume();
    });
    req.on("error", reject);
    req.end();
  });
}

describe("GET /", () => {
  it("serves the dashboard page as HTML", async () => {
    const page = await fetch(`${api.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain("<h1>Orders</h1>");
  });

  it("serves the page at /api/dashboard too, and its style and code beside it, as the Functions app does", async () => {
    const page = await fetch(`${api.url}/api/dashboard`);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).toContain("/api/dashboard/dashboard.css");
    expect(html).toContain("/api/dashboard/dashboard.js");
    const style = await fetch(`${api.url}/api/dashboard/dashboard.css`);
    expect([style.status, style.headers.get("content-type")]).toEqual([200, "text/css; charset=utf-8"]);
    const script = await fetch(`${api.url}/api/dashboard/dashboard.js`);
    expect([script.status, script.headers.get("content-type")]).toEqual([
      200,
      "text/javascript; charset=utf-8",
    ]);
    expect(await script.text()).toContain('"x-functions-key": code');
  });

  it("serves no other file: an unknown name or a way out of web/dashboard/ is 404 in JSON", async () => {
    for (const path of [
      "/api/dashboard/other.js",
      "/api/dashboard/..",
      "/api/dashboard/../../package.json",
      "/api/dashboard/..%2F..%2Fpackage.json",
      "/api/dashboard/%2e%2e",
    ]) {
      expect(await rawGet(path), path).toEqual({
        status: 404,
        contentType: "application/json; charset=utf-8",
      });
    }
  });
});
