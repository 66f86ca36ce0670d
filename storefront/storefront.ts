/**
 * The storefront: the pattern's submitting application. Shoppers browse the catalogue and place orders
 * in a web page; the storefront sends each order to the Scheduler's orders queue naming its own private
 * status queue as `replyTo`, and learns what became of it only from the status messages that arrive
 * there. It talks to the Scheduler through those two queues and nothing else.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { STOREFRONT_FILES, type WebFolder, webFolder } from "../src/adapters/web/web-assets.js";
import type { Clock } from "../src/ports/clock.js";
import type { Logger } from "../src/ports/logger.js";
import type { MessageQueue } from "../src/ports/message-queue.js";
import { type Catalogue, loadCatalogue } from "./catalogue.js";
import { MAX_CART_BYTES } from "./checkout.js";
import { type Answer, methodNotAllowed, readText, sendJson, serveStatic } from "./http-io.js";
import { limitProblems, OrderAdmission, resolveLimits, type StorefrontLimits } from "./limits.js";
import { LiveOrders } from "./live-orders.js";
import { OrderBook } from "./order-book.js";
import { createEventStreams, type EventStreams } from "./order-events.js";
import { Outbox } from "./outbox.js";
import { startStatusConsumer } from "./status-consumer.js";
import { createStorefrontApi, type StorefrontApi } from "./storefront-api.js";
import { visitorOf } from "./visitor.js";

export interface StorefrontOptions {
  /** Where checkout sends order messages: the Scheduler's orders queue. */
  readonly orders: MessageQueue;
  /** The storefront's private status queue, received from. */
  readonly statusQueue: MessageQueue;
  /** Its name, given as `replyTo` in every order message. */
  readonly statusQueueName: string;
  /** The SQLite file of what it placed and received; ":memory:" allowed. */
  readonly orderBookFile: string;
  /** 0: any free port (read it from `url`). */
  readonly port: number;
  readonly host: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** What anyone may take (each missing one as `resolveLimits` gives it). */
  readonly limits?: Partial<StorefrontLimits>;
}

export interface Storefront {
  /** Base URL, e.g. `http://127.0.0.1:7080`, without a trailing slash. */
  readonly url: string;
  /** Stops receiving, resending and listening, ends open event streams, closes the order book. */
  close(): Promise<void>;
}

/** Listening on a port something else holds. */
export class PortInUseError extends Error {
  override readonly name = "PortInUseError";
  constructor(
    readonly port: number,
    readonly host: string,
  ) {
    super(`port ${port} on ${host} is already in use: stop what holds it, or choose another port`);
  }
}

const ORDERS_PATH = "/api/orders";
const ORDER_PATH = /^\/api\/orders\/([^/]+)$/;
const EVENTS_PATH = /^\/api\/orders\/([^/]+)\/events$/;

export async function startStorefront(options: StorefrontOptions): Promise<Storefront> {
  const limits = resolveLimits(options.limits ?? {});
  const problems = limitProblems(limits, (limit) => `limits.${limit}`);
  if (problems.length > 0) throw new RangeError(`invalid storefront limits: ${problems.join("; ")}`);
  const catalogue = loadCatalogue();
  const logger = options.logger.child({ component: "storefront" });
  const book = OrderBook.open(options.orderBookFile, logger);
  const live = new LiveOrders();
  const outbox = new Outbox({ book, orders: options.orders, clock: options.clock, logger });
  const api = createStorefrontApi({ ...options, catalogue, book, outbox, logger });
  const streams = createEventStreams(live, options.clock, limits);
  const admission = new OrderAdmission(limits, options.clock);
  const files = webFolder("storefront", STOREFRONT_FILES);
  const server = createServer((req, res) => {
    void respond({ api, streams, admission, files, logger }, req, res);
  });
  try {
    await listen(server, options.port, options.host);
  } catch (error) {
    book.close();
    throw error;
  }
  const consumer = startStatusConsumer({
    queue: options.statusQueue,
    book,
    live,
    clock: options.clock,
    logger,
  });
  outbox.start();
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
  logger.info("storefront.started", {
    url,
    statusQueue: options.statusQueueName,
    catalogue: describe(catalogue),
    resendHorizonMs: outbox.horizonMs,
    limits,
  });

  let closed: Promise<void> | undefined;
  return {
    url,
    close: () => {
      closed ??= (async () => {
        await Promise.all([consumer.stop(), outbox.stop()]);
        streams.closeAll();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        book.close();
        logger.info("storefront.stopped", { url });
      })();
      return closed;
    },
  };
}

function listen(server: ReturnType<typeof createServer>, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(error.code === "EADDRINUSE" ? new PortInUseError(port, host) : error),
    );
    server.listen(port, host, () => resolve());
  });
}

function describe(catalogue: Catalogue): string {
  return `${catalogue.products.length} products in ${catalogue.currency}`;
}

interface Parts {
  readonly api: StorefrontApi;
  readonly streams: EventStreams;
  readonly admission: OrderAdmission;
  readonly files: WebFolder;
  readonly logger: Logger;
}

async function respond(parts: Parts, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? "";
  const url = new URL(req.url ?? "/", "http://storefront");
  try {
    if (await serveStatic(parts.files, req, res, url.pathname)) return;
    const answer = await route(parts, req, res, url);
    if (answer) sendJson(res, answer);
  } catch (error) {
    parts.logger.error("storefront.http.failed", { method, path: url.pathname, error: String(error) });
    sendJson(res, { status: 500, body: { error: "internal error" } });
  }
}

/** The API's answer, or null when the request became an event stream. */
async function route(
  parts: Parts,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<Answer | null> {
  const { api } = parts;
  const method = req.method ?? "";
  const path = url.pathname;
  if (path === "/api/catalogue") return method === "GET" ? api.catalogue() : methodNotAllowed(method, "GET");
  if (path === ORDERS_PATH) {
    if (method === "GET") return api.listOrders(url.searchParams.get("ids"));
    if (method !== "POST") return methodNotAllowed(method, "GET", "POST");
    const refused = parts.admission.admit(visitorOf(req));
    if (refused) {
      parts.logger.debug("storefront.order.limited", { reason: refused.reason });
      return refused;
    }
    const body = await readText(req, MAX_CART_BYTES);
    if (body === "aborted") return { status: 400, body: { error: "request aborted" } };
    if (body === "tooLarge")
      return { status: 413, body: { error: `a cart is at most ${MAX_CART_BYTES} bytes` } };
    return api.placeOrder(body);
  }
  const events = EVENTS_PATH.exec(path);
  if (events) {
    if (method !== "GET") return methodNotAllowed(method, "GET");
    const orderId = decoded(events[1]);
    const found = api.order(orderId);
    if (!found) return api.getOrder(orderId);
    return parts.streams.open(res, found, visitorOf(req));
  }
  const order = ORDER_PATH.exec(path);
  if (order) return method === "GET" ? api.getOrder(decoded(order[1])) : methodNotAllowed(method, "GET");
  return { status: 404, body: { error: `no such path ${path}` } };
}

/** A path segment decoded; one that is not valid percent-encoding is kept as it came (no order has it). */
function decoded(segment: string | undefined): string {
  try {
    return decodeURIComponent(segment ?? "");
  } catch {
    return segment ?? "";
  }
}
