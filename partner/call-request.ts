/**
 * A call to the partner as it arrives over HTTP: `POST /operations/{operation}` with an Idempotency-Key
 * and a JSON body, checked into a `Call` or refused with the answer that says what is wrong.
 */
import type { IncomingMessage } from "node:http";
import type { JsonAnswer } from "../src/adapters/web/json-response.js";
import { readBodyUpTo } from "../src/adapters/web/request-body.js";
import {
  isPartnerOperation,
  isUndoOperation,
  PARTNER_OPERATIONS,
  type PartnerOperation,
} from "../src/domain/partner-operations.js";

export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
const ORDER_ID_MAX_LENGTH = 200;
const REFERENCE_MAX_LENGTH = 200;
export const MAX_BODY_BYTES = 64 * 1024;

/** A well-formed call. */
export interface Call {
  readonly operation: PartnerOperation;
  readonly key: string;
  readonly orderId: string;
  /** The reference to undo; null for effect operations. */
  readonly target: string | null;
}

export type Parsed =
  | { readonly ok: true; readonly call: Call }
  | {
      readonly ok: false;
      readonly answer: JsonAnswer & { readonly body: { error: string; message: string } };
    };

/** `path` is the request's path, without its query. */
export async function parseCall(req: IncomingMessage, path: string): Promise<Parsed> {
  const match = /^\/operations\/([^/]*)$/.exec(path);
  if (!match) {
    return fail(
      404,
      "not-found",
      `no such path ${path}; calls go to POST /operations/{operation}, the books to GET /ledger`,
    );
  }
  const operation = match[1] ?? "";
  if (!isPartnerOperation(operation)) {
    return fail(
      404,
      "unknown-operation",
      `unknown operation "${operation}"; expected one of ${PARTNER_OPERATIONS.join(", ")}`,
    );
  }
  if (req.method !== "POST") {
    return fail(405, "method-not-allowed", `${operation} takes POST, not ${req.method}`, { Allow: "POST" });
  }
  const body = await readBody(req);
  if (body === null)
    return fail(413, "body-too-large", `the request body must be at most ${MAX_BODY_BYTES} bytes`);

  const header = req.headers["idempotency-key"];
  const key = Array.isArray(header) ? header.join(", ") : (header ?? "");
  if (key.length === 0) {
    return fail(400, "missing-idempotency-key", "the Idempotency-Key header is required");
  }
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    return fail(
      400,
      "invalid-idempotency-key",
      `the Idempotency-Key header must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters, got ${key.length}`,
    );
  }

  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    return fail(400, "invalid-json", `the request body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return fail(400, "invalid-body", "the request body must be a JSON object");
  }
  const fields = json as Record<string, unknown>;
  const orderId = fields.orderId;
  if (typeof orderId !== "string" || orderId.length === 0 || orderId.length > ORDER_ID_MAX_LENGTH) {
    return fail(400, "invalid-body", `orderId must be a string of 1 to ${ORDER_ID_MAX_LENGTH} characters`);
  }
  let target: string | null = null;
  if (isUndoOperation(operation)) {
    const reference = fields.reference;
    if (typeof reference !== "string" || reference.length === 0 || reference.length > REFERENCE_MAX_LENGTH) {
      return fail(
        400,
        "invalid-body",
        `reference must be a string of 1 to ${REFERENCE_MAX_LENGTH} characters: the reference of the effect to undo`,
      );
    }
    target = reference;
  }
  return { ok: true, call: { operation, key, orderId, target } };
}

/** The body as text, or null when it is larger than allowed (it is still drained, to keep the connection usable). */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const body = await readBodyUpTo(req, MAX_BODY_BYTES);
  return body === undefined ? null : body.toString("utf8");
}

function fail(status: number, error: string, message: string, headers?: Record<string, string>): Parsed {
  return {
    ok: false,
    answer: headers ? { status, body: { error, message }, headers } : { status, body: { error, message } },
  };
}
