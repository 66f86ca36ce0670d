import http from "node:http";
import https from "node:https";
import { jsonObjectOf } from "../../domain/validation.js";
import type { Clock } from "../../ports/clock.js";
import {
  PARTNER_KEY_HEADER,
  type PartnerControls,
  type PartnerControlsResult,
} from "../../ports/partner-controls.js";

export interface HttpPartnerControlsOptions {
  /** The partner's base URL, as the Agents call it (PARTNER_URL). */
  readonly url: string;
  /** Sent as `x-partner-key` when set (PARTNER_ACCESS_KEY). */
  readonly accessKey?: string;
  /** The clock the time allowed runs on. */
  readonly clock: Clock;
  /** Longest a call may take, its whole answer read (default 5 s). */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 5_000;
/** The control state holds the last 50 changes: a few kilobytes. */
const MAX_ANSWER_BYTES = 256 * 1024;

type Method = "GET" | "POST" | "DELETE";

/** What came back: an answer, or why none did. */
type Exchange =
  | { readonly answered: true; readonly status: number; readonly text: string }
  | { readonly answered: false; readonly message: string };

/**
 * The partner's controls over HTTP. Operators call them now and then, so each call opens its own
 * connection; Node's own client, as the Agents use, rather than `fetch`.
 */
export function createHttpPartnerControls(options: HttpPartnerControlsOptions): PartnerControls {
  const base = options.url.replace(/\/+$/, "");
  const call = async (method: Method, path: string, body?: unknown): Promise<PartnerControlsResult> => {
    const exchange = await send(options, method, new URL(`${base}${path}`), body);
    return resultOf(exchange, `${method} ${path}`, base);
  };
  return {
    status: () => call("GET", "/control"),
    setFaults: (faults) => call("POST", "/control/faults", faults),
    startOutage: (seconds) => call("POST", "/control/outage", { seconds }),
    endOutage: () => call("DELETE", "/control/outage"),
  };
}

/** The partner's answer as the operator API passes it on, or the refusal with its reason. */
function resultOf(exchange: Exchange, request: string, base: string): PartnerControlsResult {
  if (!exchange.answered) {
    return {
      kind: "refused",
      reason: "partner-unreachable",
      message: `${request} to ${base}: ${exchange.message}`,
    };
  }
  const { status, text } = exchange;
  const body = jsonObjectOf(text);
  if (status === 404) {
    return {
      kind: "refused",
      reason: "no-partner-controls",
      message: `the partner at ${base} has no control API (${request} answered 404): only the simulated partner has one`,
    };
  }
  if (status === 401 || status === 403) {
    const said = typeof body?.message === "string" ? `: ${body.message}` : "";
    return {
      kind: "refused",
      reason: "partner-refused-key",
      message: `the partner at ${base} refused ${request} with ${status}${said}; check PARTNER_ACCESS_KEY`,
    };
  }
  if (body && ((status >= 200 && status < 300) || status === 400)) return { kind: "answer", status, body };
  return {
    kind: "refused",
    reason: "partner-failed",
    message: `the partner at ${base} answered ${request} with ${status}: ${text.slice(0, 200) || "no body"}`,
  };
}

function send(
  options: HttpPartnerControlsOptions,
  method: Method,
  url: URL,
  body: unknown,
): Promise<Exchange> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string | number> = { accept: "application/json" };
  if (options.accessKey !== undefined) headers[PARTNER_KEY_HEADER] = options.accessKey;
  if (payload !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(payload);
  }
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    const timer = new AbortController();
    let settled = false;
    const settle = (exchange: Exchange) => {
      if (settled) return;
      settled = true;
      timer.abort();
      resolve(exchange);
    };
    const request = client.request(url, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_ANSWER_BYTES) return void chunks.push(chunk);
        settle({ answered: false, message: `the answer is larger than ${MAX_ANSWER_BYTES} bytes` });
        response.destroy();
      });
      response.on("end", () =>
        settle({
          answered: true,
          status: response.statusCode ?? 0,
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      response.on("error", (error) => settle({ answered: false, message: error.message }));
      response.on("close", () => settle({ answered: false, message: "the answer was cut off" }));
    });
    request.on("error", (error: NodeJS.ErrnoException) =>
      settle({ answered: false, message: error.message || error.code || "the connection failed" }),
    );
    options.clock.sleep(timeoutMs, timer.signal).then(
      () => {
        settle({ answered: false, message: `no answer within ${timeoutMs} ms` });
        request.destroy();
      },
      () => undefined,
    );
    request.end(payload);
  });
}
