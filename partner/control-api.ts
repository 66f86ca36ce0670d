/**
 * The partner's control API: what an operator turns to bring it down and back, and to change its
 * faults, while it runs.
 *
 *   GET    /control          200 PartnerControlState
 *   POST   /control/faults   { "transient"?, "permanent"?, "slow"?, "lostReply"? }: merged over the
 *                            current rates and checked as a whole; 400 invalid-faults naming the rate
 *   POST   /control/outage   { "seconds": 1..86400 }: down until then (a running outage gets the new
 *                            end); 400 invalid-outage otherwise
 *   DELETE /control/outage   ends a running outage now
 *
 * Every change answers 200 with the new state, once the change is in the books.
 */
import type { IncomingMessage } from "node:http";
import type { JsonAnswer } from "../src/adapters/web/json-response.js";
import { readRequestBody } from "../src/adapters/web/request-body.js";
import { type ControlHost, controlState, endOutage, mergeFaults, startOutage } from "./control.js";

const MAX_CONTROL_BODY_BYTES = 16 * 1024;

/** The answer to a request whose path is `/control` or under it. */
export async function controlAnswer(
  host: ControlHost,
  path: string,
  req: IncomingMessage,
): Promise<JsonAnswer> {
  const method = req.method ?? "GET";
  switch (path) {
    case "/control":
      if (method !== "GET") return notAllowed(path, method, "GET");
      return stateAnswer(host);
    case "/control/faults":
      if (method !== "POST") return notAllowed(path, method, "POST");
      return change(host, req, "invalid-faults", (body) => mergeFaults(host, body));
    case "/control/outage":
      if (method === "DELETE") {
        endOutage(host);
        return stateAnswer(host);
      }
      if (method !== "POST") return notAllowed(path, method, "POST, DELETE");
      return change(host, req, "invalid-outage", (body) => startOutage(host, body.seconds));
    default:
      return {
        status: 404,
        body: {
          error: "not-found",
          message: `no such path ${path}; the control API is GET /control, POST /control/faults, POST and DELETE /control/outage`,
        },
      };
  }
}

/** Reads the request's JSON object and applies it; a RangeError from `apply` is a 400 named `error`. */
async function change(
  host: ControlHost,
  req: IncomingMessage,
  error: string,
  apply: (body: Readonly<Record<string, unknown>>) => void,
): Promise<JsonAnswer> {
  const raw = await readRequestBody(req, MAX_CONTROL_BODY_BYTES);
  if (raw === "tooLarge") {
    return invalid(413, "body-too-large", `the request body must be at most ${MAX_CONTROL_BODY_BYTES} bytes`);
  }
  if (raw === "aborted") return invalid(400, error, "the request body did not arrive");
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch (cause) {
    return invalid(400, error, `the request body is not valid JSON: ${(cause as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return invalid(400, error, "the request body must be a JSON object");
  }
  try {
    apply(body as Record<string, unknown>);
  } catch (cause) {
    if (cause instanceof RangeError) return invalid(400, error, cause.message);
    throw cause;
  }
  return stateAnswer(host);
}

function stateAnswer(host: ControlHost): JsonAnswer {
  return { status: 200, body: controlState(host) };
}

function invalid(status: number, error: string, message: string): JsonAnswer {
  return { status, body: { error, message } };
}

function notAllowed(path: string, method: string, allow: string): JsonAnswer {
  return {
    status: 405,
    body: { error: "method-not-allowed", message: `${path} takes ${allow}, not ${method}` },
    headers: { Allow: allow },
  };
}
