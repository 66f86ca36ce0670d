import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import azureFunctions from "@azure/functions";
import { listenOrRefuse } from "../../src/adapters/web/listen-or-refuse.js";
import { readBodyUpTo } from "../../src/adapters/web/request-body.js";
import type { Logger } from "../../src/ports/logger.js";
import { type BindingData, invocationContextFor } from "../worker/invocation-context.js";
import { type CapturedFunction, triggerOf } from "../worker/registration-capture.js";
import { serveLanding } from "./landing-page.js";

/**
 * The keys the host checks: a function key opens `function` routes, the master key every route, and
 * the `durabletask_extension` system key the Durable Functions extension's webhooks.
 */
export interface HostKeys {
  readonly functionKey: string;
  readonly masterKey: string;
  readonly durableTaskKey: string;
}

/** Where the host serves the Durable Functions extension's webhooks, and what answers them there. */
export const DURABLE_WEBHOOKS = "/runtime/webhooks/durabletask/";

export interface HttpTriggerOptions {
  /** The functions with an `httpTrigger`. */
  readonly functions: readonly CapturedFunction[];
  readonly keys: HostKeys;
  readonly port: number;
  readonly host: string;
  readonly bindingData: BindingData;
  readonly logger: Logger;
  /** The extension's API, for requests under `DURABLE_WEBHOOKS` that carry its key; 404 there without it. */
  readonly durableWebhooks?: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface HttpTriggers {
  readonly url: string;
  close(): Promise<void>;
}

/** host.json's default `extensions.http.routePrefix`. */
const ROUTE_PREFIX = "/api/";
/** The host's default limit on a request body. */
const MAX_BODY_BYTES = 100 * 1024 * 1024;

interface Route {
  readonly fn: CapturedFunction;
  readonly methods: readonly string[];
  readonly authLevel: string;
  readonly segments: readonly string[];
}

/**
 * Serves the HTTP triggers as the host does: `/api/<route>` with `{parameter}` segments, the methods
 * each function registered, and the key check of its `authLevel` (`x-functions-key` header or `code`
 * query parameter; 401 without a body when it fails). A handler's answer is written as the Node.js
 * worker writes it; a handler that throws is a 500 without a body. `GET /` leads to the dashboard.
 */
export async function startHttpTriggers(options: HttpTriggerOptions): Promise<HttpTriggers> {
  const routes = options.functions.map(routeOf);
  const server = createServer((req, res) => {
    serve(req, res, routes, options).catch((error: unknown) => {
      options.logger.error("host.http.failed", { method: req.method, path: req.url, error });
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await listenOrRefuse(server, {
    port: options.port,
    host: options.host,
    remedy: "choose another with --port",
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function routeOf(fn: CapturedFunction): Route {
  const trigger = triggerOf(fn);
  const route = typeof trigger?.route === "string" ? trigger.route : fn.name;
  const methods = Array.isArray(trigger?.methods) ? trigger.methods.map((m) => String(m).toUpperCase()) : [];
  return {
    fn,
    methods,
    authLevel: String(trigger?.authLevel ?? "function").toLowerCase(),
    segments: route.split("/").filter((segment) => segment !== ""),
  };
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  routes: readonly Route[],
  options: HttpTriggerOptions,
) {
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
  const method = req.method ?? "GET";
  if (url.pathname.startsWith(DURABLE_WEBHOOKS) && options.durableWebhooks) {
    if (!acceptsWebhookKey(keyOf(req, url) ?? "", options.keys)) {
      req.resume();
      res.writeHead(401).end();
      return;
    }
    options.durableWebhooks(req, res);
    return;
  }
  if (url.pathname === "/" && (method === "GET" || method === "HEAD")) {
    serveLanding(req, res, url);
    return;
  }
  const match = url.pathname.startsWith(ROUTE_PREFIX) ? matchRoute(routes, method, url.pathname) : undefined;
  if (!match) {
    req.resume();
    res.writeHead(404).end();
    return;
  }
  if (!authorised(match.route.authLevel, req, url, options.keys)) {
    req.resume();
    res.writeHead(401).end();
    return;
  }
  const body = await readBodyUpTo(req, MAX_BODY_BYTES);
  if (body === undefined) {
    res.writeHead(413).end();
    return;
  }
  const request = new azureFunctions.HttpRequest({
    method,
    url: url.toString(),
    headers: headersOf(req),
    query: Object.fromEntries(url.searchParams),
    params: match.params,
    ...(body.length > 0 ? { body: { bytes: body } } : {}),
  });
  const context = invocationContextFor(match.route.fn, {
    bindingData: options.bindingData,
    logger: options.logger,
  });
  const result = await match.route.fn.handler(request, context);
  const response =
    result instanceof azureFunctions.HttpResponse ? result : new azureFunctions.HttpResponse(result ?? {});
  const payload = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(payload);
}

function matchRoute(routes: readonly Route[], method: string, pathname: string) {
  let parts: string[];
  try {
    parts = pathname
      .slice(ROUTE_PREFIX.length)
      .split("/")
      .filter((part) => part !== "")
      .map(decodeURIComponent);
  } catch {
    return undefined;
  }
  for (const route of routes) {
    if (!route.methods.includes(method)) continue;
    const params = paramsOf(route.segments, parts);
    if (params) return { route, params };
  }
  return undefined;
}

/**
 * The route's parameters when `parts` match its template, compared without regard to case as the host
 * does; a trailing optional parameter (`{file?}`) may be left out.
 */
function paramsOf(segments: readonly string[], parts: readonly string[]): Record<string, string> | undefined {
  const leftOut = segments.slice(parts.length);
  if (parts.length > segments.length || !leftOut.every((s) => s.endsWith("?}"))) return undefined;
  const params: Record<string, string> = {};
  for (const [index, segment] of segments.slice(0, parts.length).entries()) {
    const part = parts[index] ?? "";
    const parameter = /^\{([^}:?]+)[^}]*\}$/.exec(segment);
    if (parameter?.[1]) params[parameter[1]] = part;
    else if (segment.toLowerCase() !== part.toLowerCase()) return undefined;
  }
  return params;
}

function authorised(authLevel: string, req: IncomingMessage, url: URL, keys: HostKeys): boolean {
  if (authLevel === "anonymous") return true;
  const given = keyOf(req, url) ?? "";
  if (sameKey(given, keys.masterKey)) return true;
  return authLevel === "function" && sameKey(given, keys.functionKey);
}

/** The extension's webhooks open to its system key and to the master key, as under the host. */
function acceptsWebhookKey(given: string, keys: HostKeys): boolean {
  return sameKey(given, keys.durableTaskKey) || sameKey(given, keys.masterKey);
}

/** The key a request gives: the `x-functions-key` header, else the `code` query parameter. */
function keyOf(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers["x-functions-key"];
  return (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get("code") ?? undefined;
}

function sameKey(given: string, key: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}
