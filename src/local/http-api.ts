/**
 * The embedded host's HTTP API, shaped like what `func start` serves on port 7071 for this app.
 *
 *   POST /api/orders          body: an order message (DESIGN.md, "Message contracts"), at most 64 KiB
 *     202 { "orderId", "status": "accepted", "statusUrl": "/api/orders/<id>" } with a Location header:
 *         the message is on the orders queue (submission validates it again there).
 *     400 { "error": "invalid order message", "issues": [{ "field", "rule", "message" }] }: every
 *         broken rule named, malformed JSON included. Nothing is queued.
 *     413 { "error": "order message too large", "maxBytes" }: the rest of the body is not read.
 *     503 { "error": "service unavailable", "message" }: the orders queue could not take the message.
 *
 *   GET /api/orders/{orderId}  orderId URL-encoded, at most 64 characters
 *     200 the state record as the store keeps it, without its `_etag`.
 *     404 { "error": "order not found", "orderId" }
 *     400 { "error": "invalid order id", "issues": [...] } for an id longer than 64 characters or
 *         broken percent-encoding.
 *
 * Any other path is 404 and any other method 405 with an Allow header. Every answer is JSON.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { MAX_ORDER_MESSAGE_BYTES, parseOrderMessage } from "../domain/order.js";
import { type StoredStateRecord, withoutStoreMetadata } from "../domain/state-record.js";
import type { Logger } from "../ports/logger.js";
import type { JsonValue, SendResult } from "../ports/message-queue.js";
import { sendJson } from "./json-response.js";

/** What the embedded pipeline provides to the API. */
export interface OrdersApiBackend {
  /** Puts an order message on the orders queue. */
  post(body: JsonValue): Promise<SendResult>;
  getRecord(orderId: string): Promise<StoredStateRecord | undefined>;
}

export interface HttpApiOptions {
  readonly backend: OrdersApiBackend;
  readonly logger: Logger;
  /** 0: any free port (read it from the result). */
  readonly port: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
}

export interface HttpApi {
  /** Base URL, e.g. `http://127.0.0.1:7071`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and ends open connections, keep-alive ones included. */
  close(): Promise<void>;
}

const ORDERS_PATH = "/api/orders";
const ORDER_PATH = /^\/api\/orders\/([^/]+)$/;
const MAX_ORDER_ID_LENGTH = 64;

interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export async function startHttpApi(options: HttpApiOptions): Promise<HttpApi> {
  const { backend, logger } = options;
  const host = options.host ?? "127.0.0.1";

  async function route(req: IncomingMessage, path: string): Promise<Answer> {
    if (path === ORDERS_PATH) {
      return req.method === "POST" ? postOrder(req) : methodNotAllowed(req, "POST");
    }
    const match = ORDER_PATH.exec(path);
    if (match) return req.method === "GET" ? getOrder(match[1] ?? "") : methodNotAllowed(req, "GET");
    return { status: 404, body: { error: "not found", path } };
  }

  async function postOrder(req: IncomingMessage): Promise<Answer> {
    const bytes = await readBody(req, MAX_ORDER_MESSAGE_BYTES);
    if (bytes === "aborted") return { status: 400, body: { error: "request aborted" } };
    if (bytes === "tooLarge") {
      return {
        status: 413,
        body: { error: "order message too large", maxBytes: MAX_ORDER_MESSAGE_BYTES },
        headers: { Connection: "close" },
      };
    }
    const text = new TextDecoder().decode(bytes);
    const parsed = parseOrderMessage(text);
    if (!parsed.ok) {
      return { status: 400, body: { error: "invalid order message", issues: parsed.error.issues } };
    }
    const { orderId } = parsed.value;
    try {
      await backend.post(JSON.parse(text) as JsonValue);
    } catch (error) {
      logger.error("http.backend-failed", { operation: "post", orderId, error });
      return unavailable("the order could not be queued; try again");
    }
    const statusUrl = `${ORDERS_PATH}/${encodeURIComponent(orderId)}`;
    return {
      status: 202,
      body: { orderId, status: "accepted", statusUrl },
      headers: { Location: statusUrl },
    };
  }

  async function getOrder(encodedId: string): Promise<Answer> {
    const orderId = decodePathSegment(encodedId);
    if (orderId === undefined) return invalidOrderId("format", "is not correctly percent-encoded");
    if (orderId.length > MAX_ORDER_ID_LENGTH) {
      return invalidOrderId("max", `must be at most ${MAX_ORDER_ID_LENGTH} characters long`);
    }
    let record: StoredStateRecord | undefined;
    try {
      record = await backend.getRecord(orderId);
    } catch (error) {
      logger.error("http.backend-failed", { operation: "getRecord", orderId, error });
      return unavailable("the order state could not be read; try again");
    }
    if (!record) return { status: 404, body: { error: "order not found", orderId } };
    return { status: 200, body: withoutStoreMetadata(record) };
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    const method = req.method ?? "";
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    res.once("close", () => {
      const status = res.headersSent ? res.statusCode : null;
      const fields = { method, path, status, durationMs: elapsedMs(started) };
      logger.info("http.request", res.writableFinished ? fields : { ...fields, aborted: true });
    });
    void route(req, path)
      .catch((error: unknown): Answer => {
        logger.error("http.internal-error", { method, path, error });
        return { status: 500, body: { error: "internal error" } };
      })
      .then((answer) => sendJson(res, answer));
  });
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => rejectMalformed(error, socket));

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  logger.info("http.started", { url });

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }).then(() => logger.info("http.stopped", { url }));
      return closed;
    },
  };
}

/**
 * The body, or "tooLarge" as soon as it is known to exceed `limit` bytes: from Content-Length before
 * reading anything, or while reading (the request is then paused, not drained). "aborted" when the
 * client goes away first.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | "tooLarge" | "aborted"> {
  if (Number(req.headers["content-length"] ?? 0) > limit) return Promise.resolve("tooLarge");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off("data", onData);
      req.pause();
      resolve("tooLarge");
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", () => resolve("aborted"));
    req.once("close", () => resolve("aborted"));
  });
}

function decodePathSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function invalidOrderId(rule: string, message: string): Answer {
  return { status: 400, body: { error: "invalid order id", issues: [{ field: "orderId", rule, message }] } };
}

function unavailable(message: string): Answer {
  return { status: 503, body: { error: "service unavailable", message } };
}

function methodNotAllowed(req: IncomingMessage, allowed: string): Answer {
  return {
    status: 405,
    body: { error: "method not allowed", method: req.method ?? "", allowed: [allowed] },
    headers: { Allow: allowed },
  };
}

/** A request Node could not parse: answered in JSON too, then the connection is closed. */
function rejectMalformed(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
  const reason = status === 431 ? "Request Header Fields Too Large" : "Bad Request";
  const body = JSON.stringify({ error: "malformed request" });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function elapsedMs(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
