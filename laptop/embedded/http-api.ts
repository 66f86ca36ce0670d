/**
 * The embedded host's HTTP API, shaped like what `func start` serves on port 7071 for this app. The
 * answers are decided by the shared orders API (src/operator/orders-api.ts); this server reads the
 * request, stops reading a body past 64 KiB, and writes JSON. Any other path is 404 and any other
 * method 405 with an Allow header. Every answer is JSON but the dashboard's files (web/dashboard/), at
 * `/` and, as the Functions app serves them, `/api/dashboard` and `/api/dashboard/{file}`. The partner's
 * controls (src/operator/partner-api.ts) are served too; their changes, like the operator commands,
 * need the API token when the host has one.
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { sendJson } from "../../src/adapters/web/json-response.js";
import { readRequestBody } from "../../src/adapters/web/request-body.js";
import { DASHBOARD_FILES, type WebFolder, webFolder } from "../../src/adapters/web/web-assets.js";
import { MAX_ORDER_MESSAGE_BYTES } from "../../src/domain/order.js";
import {
  type ApiAnswer,
  bodyTooLarge,
  createOrdersApi,
  MAX_OPERATOR_BODY_BYTES,
  ORDERS_PATH,
  type OrdersApi,
  type OrdersApiBackend,
  orderTooLarge,
  STATS_PATH,
} from "../../src/operator/orders-api.js";
import {
  createPartnerApi,
  PARTNER_FAULTS_PATH,
  PARTNER_OUTAGE_PATH,
  PARTNER_PATH,
  type PartnerApi,
} from "../../src/operator/partner-api.js";
import type { Logger } from "../../src/ports/logger.js";
import type { PartnerControls } from "../../src/ports/partner-controls.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";

export type { OrdersApiBackend } from "../../src/operator/orders-api.js";

export interface HttpApiOptions {
  readonly backend: OrdersApiBackend;
  readonly logger: Logger;
  /** 0: any free port (read it from the result). */
  readonly port: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** When set, the operator commands need `Authorization: Bearer <apiToken>`. */
  readonly apiToken?: string;
  /** Where the submissions' spans go (default: the global providers). */
  readonly telemetry?: Telemetry;
  /** The partner's controls; absent, `/api/partner` answers 404 `no-partner-controls`. */
  readonly partner?: PartnerControls;
}

export interface HttpApi {
  /** Base URL, e.g. `http://127.0.0.1:7071`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and ends open connections, keep-alive ones included. */
  close(): Promise<void>;
}

const ORDER_PATH = /^\/api\/orders\/([^/]+)$/;
const OPERATOR_PATH = /^\/api\/orders\/([^/]+)\/(resubmit|compensate)$/;
const HISTORY_PATH = /^\/api\/orders\/([^/]+)\/history$/;
const DASHBOARD_PAGE_PATHS = new Set(["/", "/api/dashboard"]);
const DASHBOARD_FILE_PATH = /^\/api\/dashboard\/([^/]+)$/;

type Answer = ApiAnswer;

export async function startHttpApi(options: HttpApiOptions): Promise<HttpApi> {
  const { backend, logger } = options;
  const host = options.host ?? "127.0.0.1";
  const api = createOrdersApi({
    backend,
    logger,
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  });
  const dashboardFiles = webFolder("dashboard", DASHBOARD_FILES);
  const partner = createPartnerApi({ controls: options.partner ?? NO_PARTNER_CONTROLS, logger });

  const server = createServer((req, res) => {
    const started = performance.now();
    const method = req.method ?? "";
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    res.once("close", () => {
      const status = res.headersSent ? res.statusCode : null;
      const fields = { method, path, status, durationMs: elapsedMs(started) };
      logger.info("http.request", res.writableFinished ? fields : { ...fields, aborted: true });
    });
    void serveDashboard(dashboardFiles, req, res, path)
      .then((served) => (served ? null : route({ api, partner }, options, req, path)))
      .catch((error: unknown): Answer => {
        logger.error("http.internal-error", { method, path, error });
        return { status: 500, body: { error: "internal error" } };
      })
      .then((answer) => answer && sendJson(res, answer));
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

/** The route's answer: the orders API decides; this reads the request's parts it needs. */
async function route(
  { api, partner }: { readonly api: OrdersApi; readonly partner: PartnerApi },
  options: HttpApiOptions,
  req: IncomingMessage,
  path: string,
): Promise<Answer> {
  if (path.startsWith(PARTNER_PATH)) {
    const answer = await partnerRoute(partner, options, req, path);
    if (answer) return answer;
  }
  if (path === ORDERS_PATH) {
    if (req.method === "GET") return api.listOrders(new URL(req.url ?? "/", "http://host").searchParams);
    return req.method === "POST" ? postOrder(api, req) : methodNotAllowed(req, "GET", "POST");
  }
  if (path === STATS_PATH) return req.method === "GET" ? api.stats() : methodNotAllowed(req, "GET");
  const match = ORDER_PATH.exec(path);
  if (match) return req.method === "GET" ? api.getOrder(match[1] ?? "") : methodNotAllowed(req, "GET");
  const history = HISTORY_PATH.exec(path);
  if (history) return req.method === "GET" ? api.getHistory(history[1] ?? "") : methodNotAllowed(req, "GET");
  const command = OPERATOR_PATH.exec(path);
  if (command) {
    if (req.method !== "POST") return methodNotAllowed(req, "POST");
    if (options.apiToken !== undefined && !bearerMatches(req, options.apiToken)) return unauthorized();
    const text = await operatorBody(req);
    if (typeof text !== "string") return text;
    const operatorCommand = command[2] === "compensate" ? "compensate" : "resubmit";
    return api.operatorCommand(operatorCommand, command[1] ?? "", text);
  }
  return { status: 404, body: { error: "not found", path } };
}

/** The partner's controls: reads open, changes behind the API token; undefined for any other path. */
async function partnerRoute(
  partner: PartnerApi,
  options: HttpApiOptions,
  req: IncomingMessage,
  path: string,
): Promise<Answer | undefined> {
  const change = path === PARTNER_FAULTS_PATH || path === PARTNER_OUTAGE_PATH;
  if (path !== PARTNER_PATH && !change) return undefined;
  if (path === PARTNER_PATH) return req.method === "GET" ? partner.status() : methodNotAllowed(req, "GET");
  const allowed = path === PARTNER_OUTAGE_PATH ? ["POST", "DELETE"] : ["POST"];
  if (!allowed.includes(req.method ?? "")) return methodNotAllowed(req, ...allowed);
  if (options.apiToken !== undefined && !bearerMatches(req, options.apiToken)) return unauthorized();
  if (req.method === "DELETE") return partner.endOutage();
  const text = await operatorBody(req);
  if (typeof text !== "string") return text;
  return path === PARTNER_OUTAGE_PATH ? partner.startOutage(text) : partner.setFaults(text);
}

/** An operator command's body as text, or the answer when it was cut off or is too long. */
async function operatorBody(req: IncomingMessage): Promise<string | Answer> {
  const bytes = await readRequestBody(req, MAX_OPERATOR_BODY_BYTES);
  if (bytes === "aborted") return { status: 400, body: { error: "request aborted" } };
  if (bytes === "tooLarge") return bodyTooLarge(MAX_OPERATOR_BODY_BYTES);
  return new TextDecoder().decode(bytes);
}

/** A host without a partner to control (none was given): every route says so. */
const NO_PARTNER_CONTROLS: PartnerControls = (() => {
  const refused = async () =>
    ({
      kind: "refused",
      reason: "no-partner-controls",
      message: "this host was given no partner controls",
    }) as const;
  return { status: refused, setFaults: refused, startOutage: refused, endOutage: refused };
})();

async function postOrder(api: OrdersApi, req: IncomingMessage): Promise<Answer> {
  const bytes = await readRequestBody(req, MAX_ORDER_MESSAGE_BYTES);
  if (bytes === "aborted") return { status: 400, body: { error: "request aborted" } };
  if (bytes === "tooLarge") return orderTooLarge();
  const traceparent = req.headers.traceparent;
  return api.postOrder(new TextDecoder().decode(bytes), typeof traceparent === "string" ? traceparent : null);
}

/** Writes the dashboard's page or one of its files when the request asks for one; false otherwise. */
async function serveDashboard(
  files: WebFolder,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  const file = DASHBOARD_FILE_PATH.exec(path)?.[1];
  if (file === undefined && !DASHBOARD_PAGE_PATHS.has(path)) return false;
  const asset = await files(file);
  if (!asset) return false;
  res.writeHead(200, {
    "Content-Type": asset.contentType,
    "Content-Length": Buffer.byteLength(asset.body),
    "Cache-Control": "no-store",
  });
  res.end(asset.body);
  return true;
}

function bearerMatches(req: IncomingMessage, token: string): boolean {
  const given = Buffer.from(req.headers.authorization ?? "");
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function unauthorized(): Answer {
  return {
    status: 401,
    body: { error: "unauthorized", message: "operator commands need Authorization: Bearer <api token>" },
    headers: { "WWW-Authenticate": "Bearer" },
  };
}

function methodNotAllowed(req: IncomingMessage, ...allowed: string[]): Answer {
  return {
    status: 405,
    body: { error: "method not allowed", method: req.method ?? "", allowed },
    headers: { Allow: allowed.join(", ") },
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
