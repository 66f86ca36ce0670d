/**
 * The simulated remote partner service the Agents call: a real HTTP server on loopback with fault
 * injection, idempotency and a ledger. A local stand-in only; in production the Agents point at the
 * real partner.
 *
 * HTTP contract
 *
 *   POST /operations/{operation}
 *     operation: reserveInventory | chargePayment | arrangeShipment | notifyCustomer (effects), or
 *                releaseInventory | refundPayment | cancelShipment | sendCorrection (their undos)
 *     Idempotency-Key: 1 to 200 characters, required
 *     body: a JSON object (at most 64 KiB) with `orderId` (string, 1 to 200 characters) and any
 *           payload; undo operations also need `reference`, the reference of the effect to undo.
 *
 *   200 { "operation", "orderId", "reference", "replayed": boolean }
 *       The first successful call for a key applies the effect and issues a reference (`res-000001`,
 *       `pay-000001`, `shp-000001`, `ntf-000001`; undos `rel-`, `ref-`, `cnl-`, `cor-`). Every later call with the same key
 *       gets the stored result with `replayed: true` and applies nothing.
 *       Undo answers also carry `"undone": boolean` and `"effectReference"` (the reference asked for).
 *       Undoing a reference this partner never issued, issued for another order or another
 *       operation, or already undone under another key is a success with `reference: null` and
 *       `undone: false`: there is nothing to undo, and undo is always safe to retry.
 *   409 { "error": "idempotency-key-reused", "message", "idempotencyKey", "boundTo": { operation,
 *       orderId, reference } } when the key was first used for another operation, order or (for an
 *       undo) reference. Nothing is applied.
 *   422 { "error": "rejected", "reason", "operation", "orderId" }: a permanent rejection (injected).
 *       Sticky: every later call with the key gets the same answer.
 *   503 { "error": "unavailable" } or 429 { "error": "throttled" } with `Retry-After: 1`: a transient
 *       fault (injected). Nothing is applied.
 *   GET /ledger
 *   200 { "totals", "byOperation", "byOrder": { orderId: { "calls", "effects": { operation:
 *       { "applied", "undone" } } } } }: what the partner did, per order and effect operation.
 *
 *   400 { "error", "message" } for a missing or over-long Idempotency-Key, a body that is not JSON or
 *       not an object, or a missing orderId / reference; 404 for an unknown path or operation; 405 for
 *       a method other than POST; 413 for a body over 64 KiB.
 *
 * Faults are injected only into well-formed calls that would otherwise be answered 200, and are
 * decided per call from (seed, key, n-th call with that key): see faults.ts. A slow call is applied
 * at once and answered `slowMs` later on the clock; a lost reply is applied and its connection
 * dropped. Undo operations get transient faults only, so compensation can always be retried into
 * success, unless `undoRefusals` is set: then they may also be rejected for good (a refund window
 * that has closed). A key whose effect is already applied is never given a new permanent rejection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Clock } from "../../../src/ports/clock.js";
import type { Logger } from "../../../src/ports/logger.js";
import { sendJson } from "../../http/json-response.js";
import { listenOrRefuse } from "../../http/listen-or-refuse.js";
import {
  decideFault,
  FAULT_KINDS,
  type FaultDecision,
  type FaultKind,
  type PartnerFaults,
  resolveFaults,
} from "./faults.js";
import { type KeyBinding, Ledger, type LedgerData, type PartnerLedger, type StoredResult } from "./ledger.js";
import { ledgerReport } from "./ledger-report.js";
import {
  isPartnerOperation,
  isUndoOperation,
  PARTNER_OPERATIONS,
  type PartnerOperation,
  REJECTION_REASON,
} from "./operations.js";

export { FAULT_KINDS, type FaultKind, NO_FAULTS, type PartnerFaults } from "./faults.js";
export type { EffectEntry, LedgerData, OperationCounts, PartnerLedger } from "./ledger.js";
export {
  EFFECT_OPERATIONS,
  type EffectOperation,
  PARTNER_OPERATIONS,
  type PartnerOperation,
  UNDO_OF,
  UNDO_OPERATIONS,
  type UndoOperation,
} from "./operations.js";

export interface PartnerServiceOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: any free port (read it from `url`). */
  readonly port?: number;
  /** What the refusal of a taken port advises besides stopping what holds it (the flag or setting that chooses another). */
  readonly portRemedy?: string;
  readonly faults?: Partial<PartnerFaults>;
  /** Seed of the fault decisions (an integer, default 0). */
  readonly seed?: number;
  /** How long a slow call waits on `clock` before answering (default 30,000 ms). */
  readonly slowMs?: number;
  /** Let permanent faults reject undo operations too (default false: undos get transient faults only). */
  readonly undoRefusals?: boolean;
  /** The books to keep, for example one restored from a file (`openLedgerFile`); default new, in memory. */
  readonly ledger?: Ledger;
  readonly clock: Clock;
  readonly logger: Logger;
}

export interface PartnerService {
  /** Base URL, e.g. `http://127.0.0.1:41234`, without a trailing slash. */
  readonly url: string;
  ledger(): PartnerLedger;
  /** The ledger as plain data, for a caller on another thread (see `ledgerView`). */
  ledgerData(): LedgerData;
  /** Forgets every key, effect and counter (the fault rates and seed stay). */
  reset(): void;
  /** Replaces the fault rates from the next call on (missing rates are 0): a partner that goes down and back. */
  setFaults(faults: Partial<PartnerFaults>): void;
  /** Stops listening, drops open connections (pending slow answers included) and frees the port. */
  close(): Promise<void>;
}

export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
const ORDER_ID_MAX_LENGTH = 200;
const REFERENCE_MAX_LENGTH = 200;
const MAX_BODY_BYTES = 64 * 1024;
const RETRY_AFTER_SECONDS = 1;

const UNDO_FAULTS: readonly FaultKind[] = ["transient"];

interface Call {
  readonly operation: PartnerOperation;
  readonly key: string;
  readonly orderId: string;
  /** The reference to undo; null for effect operations. */
  readonly target: string | null;
}

interface Answer {
  readonly status: number;
  readonly body: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
}

type Parsed = { readonly ok: true; readonly call: Call } | { readonly ok: false; readonly answer: Answer };

/** What the handlers of one running partner service share. */
interface PartnerRuntime {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly seed: number;
  readonly slowMs: number;
  readonly undoRefusals: boolean;
  /** The fault rates of the next call; `setFaults` replaces them. */
  faults: PartnerFaults;
  /** Aborted by close(), so answers still waiting on the clock give up instead of holding the server open. */
  readonly closing: AbortController;
}

type CallLog = (outcome: string, fields?: Record<string, unknown>) => void;

export async function startPartnerService(options: PartnerServiceOptions): Promise<PartnerService> {
  const partner = partnerRuntime(options);
  const host = options.host ?? "127.0.0.1";
  const server = createServer((req, res) => serve(partner, req, res));
  await listenOrRefuse(server, {
    port: options.port ?? 0,
    host,
    ...(options.portRemedy !== undefined ? { remedy: options.portRemedy } : {}),
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const { seed, slowMs, faults } = partner;
  partner.logger.info("partner.started", { url, seed, slowMs, faults });
  return partnerControls(partner, server, url);
}

function partnerRuntime(options: PartnerServiceOptions): PartnerRuntime {
  const seed = options.seed ?? 0;
  const slowMs = options.slowMs ?? 30_000;
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  if (!Number.isFinite(slowMs) || slowMs < 0) {
    throw new RangeError(`slowMs must be a number of milliseconds of 0 or more, got ${slowMs}`);
  }
  return {
    faults: resolveFaults(options.faults),
    ledger: options.ledger ?? new Ledger(),
    clock: options.clock,
    logger: options.logger,
    seed,
    slowMs,
    undoRefusals: options.undoRefusals ?? false,
    closing: new AbortController(),
  };
}

function partnerControls(partner: PartnerRuntime, server: Server, url: string): PartnerService {
  const { ledger, logger } = partner;
  let closed: Promise<void> | undefined;
  return {
    url,
    ledger: () => ledger.snapshot(),
    ledgerData: () => ledger.data(),
    reset: () => ledger.reset(),
    setFaults: (next) => {
      partner.faults = resolveFaults(next);
      logger.info("partner.faults", { faults: partner.faults });
    },
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        partner.closing.abort(new Error("partner service closed"));
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }).then(() => logger.info("partner.stopped", { url }));
      return closed;
    },
  };
}

function serve(partner: PartnerRuntime, req: IncomingMessage, res: ServerResponse): void {
  handle(partner, req, res).catch((error: unknown) => {
    partner.logger.error("partner.internal-error", { error });
    if (!res.headersSent) sendJson(res, { status: 500, body: { error: "internal", message: String(error) } });
    else req.socket.destroy();
  });
}

async function handle(partner: PartnerRuntime, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === "GET" && new URL(req.url ?? "/", "http://partner").pathname === "/ledger") {
    sendJson(res, { status: 200, body: { ...ledgerReport(partner.ledger.data()) } });
    return;
  }
  const parsed = await parseCall(req);
  if (!parsed.ok) {
    partner.ledger.count("badRequests");
    partner.logger.warn("partner.bad-request", {
      method: req.method,
      path: req.url,
      status: parsed.answer.status,
      error: parsed.answer.body.error,
      message: parsed.answer.body.message,
    });
    sendJson(res, parsed.answer);
    return;
  }
  await answerCall(partner, parsed.call, req, res);
}

/** A well-formed call: refused (key conflict, rejection, injected fault) or answered with its result. */
async function answerCall(
  partner: PartnerRuntime,
  call: Call,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { ledger } = partner;
  const n = ledger.countCall(call.operation, call.key, call.orderId);
  const log: CallLog = (outcome, fields = {}) =>
    partner.logger.info("partner.call", {
      operation: call.operation,
      idempotencyKey: call.key,
      orderId: call.orderId,
      call: n,
      outcome,
      ...fields,
    });

  const binding = ledger.bindingOf(call.key);
  if (binding && !sameCall(binding, call)) {
    ledger.count("conflicts");
    log("conflict");
    sendJson(res, conflict(call, binding));
    return;
  }
  if (binding?.result.kind === "rejected") {
    ledger.count("rejections");
    log("rejected", { reason: binding.result.reason, sticky: true });
    sendJson(res, rejected(binding.result));
    return;
  }

  const allowed = isUndoOperation(call.operation) && !partner.undoRefusals ? UNDO_FAULTS : FAULT_KINDS;
  const decision = decideFault(partner.faults, partner.seed, call.key, n, allowed);
  if (decision.kind === "transient") {
    ledger.count("transientFaults");
    log(decision.throttled ? "throttled" : "unavailable", { fault: "transient" });
    sendJson(res, decision.throttled ? THROTTLED : UNAVAILABLE);
    return;
  }
  if (decision.kind === "permanent" && !binding) {
    const reason = REJECTION_REASON[call.operation];
    const result = ledger.reject(call.key, call.operation, call.orderId, call.target, reason);
    ledger.count("rejections");
    log("rejected", { reason, fault: "permanent" });
    sendJson(res, rejected(result));
    return;
  }
  await succeed(partner, { call, binding, decision, log }, req, res);
}

/** The call succeeds: applied now, or replayed from the key's stored result; its reply slow or lost by fault. */
async function succeed(
  partner: PartnerRuntime,
  success: { call: Call; binding: KeyBinding | undefined; decision: FaultDecision; log: CallLog },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { call, binding, decision, log } = success;
  const replayed = binding !== undefined;
  const result = binding?.result ?? apply(partner, call);
  const fault = decision.kind === "slow" || decision.kind === "lostReply" ? decision.kind : "none";
  log(outcomeOf(result, replayed), { reference: referenceOf(result), fault });

  if (fault === "lostReply") {
    partner.ledger.count("lostReplies");
    req.socket.destroy();
    return;
  }
  if (fault === "slow") {
    partner.ledger.count("slowReplies");
    // A caller that gives up (or close()) ends the wait, so no sleeper is left behind on the clock.
    const callerGone = new AbortController();
    res.once("close", () => callerGone.abort(new Error("the caller closed the connection")));
    try {
      await partner.clock.sleep(partner.slowMs, AbortSignal.any([partner.closing.signal, callerGone.signal]));
    } catch {
      partner.logger.debug("partner.slow-reply-abandoned", {
        operation: call.operation,
        idempotencyKey: call.key,
      });
      req.socket.destroy();
      return;
    }
  }
  sendJson(res, { status: 200, body: successBody(result, replayed) });
}

function apply(partner: PartnerRuntime, call: Call): StoredResult {
  const { operation, key, orderId, target } = call;
  if (isUndoOperation(operation)) return partner.ledger.applyUndo(key, operation, orderId, target ?? "");
  return partner.ledger.applyEffect(key, operation, orderId, partner.clock.now());
}

async function parseCall(req: IncomingMessage): Promise<Parsed> {
  const path = new URL(req.url ?? "/", "http://partner").pathname;
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
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size <= MAX_BODY_BYTES) chunks.push(buffer);
  }
  return size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString("utf8");
}

function sameCall(binding: KeyBinding, call: Call): boolean {
  return (
    binding.operation === call.operation && binding.orderId === call.orderId && binding.target === call.target
  );
}

function conflict(call: Call, binding: KeyBinding): Answer {
  return {
    status: 409,
    body: {
      error: "idempotency-key-reused",
      message: `Idempotency-Key "${call.key}" was first used for ${describe(binding)}; it cannot be reused for ${describe(call)}`,
      idempotencyKey: call.key,
      boundTo: { operation: binding.operation, orderId: binding.orderId, reference: binding.target },
    },
  };
}

function describe(call: { operation: string; orderId: string; target: string | null }): string {
  const of = call.target === null ? "" : ` of ${call.target}`;
  return `${call.operation}${of} for order ${call.orderId}`;
}

function rejected(result: Extract<StoredResult, { kind: "rejected" }>): Answer {
  return {
    status: 422,
    body: { error: "rejected", reason: result.reason, operation: result.operation, orderId: result.orderId },
  };
}

const UNAVAILABLE: Answer = {
  status: 503,
  body: { error: "unavailable", message: "the partner is temporarily unavailable; retry later" },
};

const THROTTLED: Answer = {
  status: 429,
  body: { error: "throttled", message: `too many requests; retry after ${RETRY_AFTER_SECONDS} s` },
  headers: { "Retry-After": String(RETRY_AFTER_SECONDS) },
};

function successBody(result: StoredResult, replayed: boolean): Record<string, unknown> {
  switch (result.kind) {
    case "effect":
      return { operation: result.operation, orderId: result.orderId, reference: result.reference, replayed };
    case "undo":
      return {
        operation: result.operation,
        orderId: result.orderId,
        reference: result.reference,
        replayed,
        undone: result.undone,
        effectReference: result.effectReference,
      };
    case "rejected":
      throw new Error("a rejected result is not a success");
  }
}

function outcomeOf(result: StoredResult, replayed: boolean): string {
  if (replayed) return "replayed";
  if (result.kind === "undo") return result.undone ? "undone" : "nothing-to-undo";
  return "applied";
}

function referenceOf(result: StoredResult): string | null {
  return result.kind === "rejected" ? null : result.reference;
}

function fail(status: number, error: string, message: string, headers?: Record<string, string>): Parsed {
  return {
    ok: false,
    answer: headers ? { status, body: { error, message }, headers } : { status, body: { error, message } },
  };
}
