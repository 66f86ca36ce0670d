/**
 * The simulated remote partner service the Agents call: a real HTTP server with fault injection,
 * idempotency, an outage an operator can switch on, and a ledger. In production the Agents point at the
 * real partner; this one runs beside the pipeline on a laptop and as an app of its own in Azure
 * (partner/main.ts, docs/partner.md).
 *
 * HTTP contract
 *
 *   Access: with an access key set, every request but `GET /health` carries it in `x-partner-key`:
 *   401 { "error": "unauthenticated" } without it, 403 { "error": "forbidden" } with another key;
 *   nothing is applied, and the partner counts it in `unauthorized`, in memory only: a refusal writes
 *   nothing to the books and does not wait on them. Without a key everything is open.
 *
 *   GET /health
 *   200 { "status": "ok" }, with or without a key; 503 { "status": "unhealthy", "reason" } once its books
 *   take no more changes (their journal failed for good, see LedgerJournal.failure). From then on every
 *   other request with the key is answered 503 { "error": "books-unavailable", "message" }: the books in
 *   memory may hold changes that were never made durable, and nothing is answered from them.
 *
 *   POST /operations/{operation}
 *     operation: a step's effect or its undo, as src/domain/partner-operations.ts declares them
 *     Idempotency-Key: 1 to 200 characters, required
 *     body: a JSON object (at most 64 KiB) with `orderId` (string, 1 to 200 characters) and any
 *           payload; undo operations also need `reference`, the reference of the effect to undo.
 *
 *   200 { "operation", "orderId", "reference", "replayed": boolean }
 *       The first successful call for a key applies the effect and issues a reference (`res-000001`:
 *       each operation's prefix is declared with it). Every later call with the same key
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
 *   503 { "error": "outage", "message", "until" } with `Retry-After` (the whole seconds left, at least
 *       1) to every well-formed call during an outage (control-api.ts). Nothing is applied; the ledger
 *       counts it as a call and in `outageRefusals`.
 *   GET /ledger
 *   200 { "totals", "byOperation", "byOrder": { orderId: { "calls", "effects": { operation:
 *       { "applied", "undone" } } } } }: what the partner did, per order and effect operation.
 *   GET /control, POST /control/faults, POST and DELETE /control/outage: see control-api.ts.
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
 *
 * Every answer waits until what the request changed in the books is durable (see LedgerJournal).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type JsonAnswer, sendJson } from "../src/adapters/web/json-response.js";
import { listenOrRefuse } from "../src/adapters/web/listen-or-refuse.js";
import { isUndoOperation, simulatedAnswerOf } from "../src/domain/partner-operations.js";
import type { Clock } from "../src/ports/clock.js";
import type { Logger } from "../src/ports/logger.js";
import { type AccessGuard, accessGuard } from "./access.js";
import { type Call, parseCall } from "./call-request.js";
import {
  adoptStartRates,
  type ControlHost,
  controlState,
  currentOutage,
  endOutage,
  mergeFaults,
  replaceFaults,
  startOutage,
} from "./control.js";
import { controlAnswer } from "./control-api.js";
import type { PartnerControlState, PartnerOutage } from "./control-contract.js";
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

export {
  EFFECT_OPERATIONS,
  type EffectOperation,
  PARTNER_OPERATIONS,
  type PartnerOperation,
  UNDO_OF,
  UNDO_OPERATIONS,
  type UndoOperation,
} from "../src/domain/partner-operations.js";
export { IDEMPOTENCY_KEY_MAX_LENGTH } from "./call-request.js";
export {
  type ControlChange,
  PARTNER_KEY_HEADER,
  type PartnerControlState,
  type PartnerOutage,
} from "./control-contract.js";
export { FAULT_KINDS, type FaultKind, NO_FAULTS, type PartnerFaults } from "./faults.js";
export type { EffectEntry, LedgerData, OperationCounts, PartnerLedger } from "./ledger.js";

export interface PartnerServiceOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: any free port (read it from `url`). */
  readonly port?: number;
  /** What the refusal of a taken port advises besides stopping what holds it (the flag or setting that chooses another). */
  readonly portRemedy?: string;
  /** The key every request but `GET /health` must carry in `x-partner-key`; default none: open to all. */
  readonly accessKey?: string;
  /**
   * The fault rates at start. When they are not the last rates in the books, they are journaled as a
   * change `by: "settings"`.
   */
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
  /** Forgets every key, effect, counter and control change, an outage included (the fault rates and seed stay). */
  reset(): void;
  /**
   * Replaces the fault rates from the next call on (missing rates are 0): a partner that goes down and
   * back. Journaled as the operator's change; `changeFaults` also waits until it is durable.
   */
  setFaults(faults: Partial<PartnerFaults>): void;
  /** What `GET /control` answers. */
  control(): PartnerControlState;
  /** As `POST /control/faults`: merged over the current rates; a RangeError names a wrong rate. */
  changeFaults(faults: Readonly<Record<string, unknown>>): Promise<PartnerControlState>;
  /** As `POST /control/outage`: down for `seconds` (1 to 86,400) from now; a RangeError otherwise. */
  startOutage(seconds: number): Promise<PartnerControlState>;
  /** As `DELETE /control/outage`. */
  endOutage(): Promise<PartnerControlState>;
  /** Stops listening, drops open connections (pending slow answers included) and frees the port. */
  close(): Promise<void>;
}

const RETRY_AFTER_SECONDS = 1;

const UNDO_FAULTS: readonly FaultKind[] = ["transient"];

type Answer = JsonAnswer & { readonly body: Readonly<Record<string, unknown>> };

/** What the handlers of one running partner service share. */
interface PartnerRuntime extends ControlHost {
  readonly accessKey: string | undefined;
  readonly refuseAccess: AccessGuard;
  readonly undoRefusals: boolean;
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
  // Journaled once listening (a partner refused its port leaves its books as they were), and before
  // any request is handled: the first runs on a later turn, and waits until this is durable too.
  adoptStartRates(partner);
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const { seed, slowMs, faults, accessKey } = partner;
  const outage = currentOutage(partner);
  partner.logger.info("partner.started", {
    url,
    seed,
    slowMs,
    faults,
    outage,
    keyed: accessKey !== undefined,
  });
  const controls = partnerControls(partner, server, url);
  try {
    await durable(partner);
  } catch (error) {
    await controls.close();
    throw error;
  }
  return controls;
}

function partnerRuntime(options: PartnerServiceOptions): PartnerRuntime {
  const seed = options.seed ?? 0;
  const slowMs = options.slowMs ?? 30_000;
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  if (!Number.isFinite(slowMs) || slowMs < 0) {
    throw new RangeError(`slowMs must be a number of milliseconds of 0 or more, got ${slowMs}`);
  }
  if (options.accessKey !== undefined && options.accessKey.length === 0) {
    throw new RangeError("accessKey must not be empty; leave it out for a partner open to all");
  }
  return {
    faults: resolveFaults(options.faults),
    ledger: options.ledger ?? new Ledger(),
    clock: options.clock,
    logger: options.logger,
    accessKey: options.accessKey,
    refuseAccess: accessGuard(options.accessKey),
    seed,
    slowMs,
    undoRefusals: options.undoRefusals ?? false,
    closing: new AbortController(),
  };
}

function partnerControls(partner: PartnerRuntime, server: Server, url: string): PartnerService {
  const { ledger, logger } = partner;
  const afterChange = async (change: () => void) => {
    change();
    await durable(partner);
    return controlState(partner);
  };
  let closed: Promise<void> | undefined;
  return {
    url,
    ledger: () => ledger.snapshot(),
    ledgerData: () => ledger.data(),
    reset: () => ledger.reset(),
    setFaults: (next) => replaceFaults(partner, resolveFaults(next)),
    control: () => controlState(partner),
    changeFaults: (faults) => afterChange(() => mergeFaults(partner, faults)),
    startOutage: (seconds) => afterChange(() => startOutage(partner, seconds)),
    endOutage: () => afterChange(() => endOutage(partner)),
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

/** Waits until every change made so far is durable; not a turn when the journal is synchronous. */
async function durable(partner: PartnerRuntime): Promise<void> {
  const pending = partner.ledger.durable();
  if (pending) await pending;
}

/** Answers once what the request changed in the books is durable. */
async function reply(partner: PartnerRuntime, res: ServerResponse, answer: JsonAnswer): Promise<void> {
  await durable(partner);
  sendJson(res, answer);
}

function serve(partner: PartnerRuntime, req: IncomingMessage, res: ServerResponse): void {
  handle(partner, req, res).catch((error: unknown) => {
    if (!req.complete && req.destroyed) {
      // The caller went away before its request was whole: nothing was applied, and no one to answer.
      partner.logger.warn("partner.caller-gone", { method: req.method, path: req.url, error });
      return;
    }
    partner.logger.error("partner.internal-error", { error });
    if (!res.headersSent) sendJson(res, { status: 500, body: { error: "internal", message: String(error) } });
    else req.socket.destroy();
  });
}

async function handle(partner: PartnerRuntime, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = pathOf(req.url);
  const failure = partner.ledger.journalFailure();
  if (req.method === "GET" && path === "/health") {
    sendJson(res, failure ? unhealthy(failure) : { status: 200, body: { status: "ok" } });
    return;
  }
  const refusal = partner.refuseAccess(req.headers);
  if (refusal) {
    partner.ledger.countRefusedCaller();
    partner.logger.warn("partner.unauthorized", { method: req.method, path, status: refusal.status });
    sendJson(res, refusal);
    return;
  }
  if (failure) {
    sendJson(res, booksUnavailable(failure));
    return;
  }
  if (req.method === "GET" && path === "/ledger") {
    sendJson(res, { status: 200, body: { ...ledgerReport(partner.ledger.data()) } });
    return;
  }
  if (path === "/control" || path.startsWith("/control/")) {
    const answer = await controlAnswer(partner, path, req);
    if (answer.status >= 400) badRequest(partner, req, answer);
    await reply(partner, res, answer);
    return;
  }
  const parsed = await parseCall(req, path);
  if (!parsed.ok) {
    badRequest(partner, req, parsed.answer);
    await reply(partner, res, parsed.answer);
    return;
  }
  await answerCall(partner, parsed.call, req, res);
}

/**
 * The request target's path, its query left out. An origin-form target (`/...`, what every client of
 * the partner sends) is taken as sent, its dot segments not resolved: every route is an exact path, so
 * such a path is refused as unknown. Any other form (absolute-form included) goes through URL parsing.
 */
function pathOf(target: string | undefined): string {
  if (target === undefined) return "/";
  if (!target.startsWith("/")) return new URL(target, "http://partner").pathname;
  const query = target.indexOf("?");
  return query === -1 ? target : target.slice(0, query);
}

function badRequest(partner: PartnerRuntime, req: IncomingMessage, answer: JsonAnswer): void {
  const body = answer.body as { error?: unknown; message?: unknown };
  partner.ledger.count("badRequests");
  partner.logger.warn("partner.bad-request", {
    method: req.method,
    path: req.url,
    status: answer.status,
    error: body.error,
    message: body.message,
  });
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

  const outage = currentOutage(partner);
  if (outage) {
    ledger.count("outageRefusals");
    log("outage", { until: outage.until });
    await reply(partner, res, down(outage, partner.clock.now()));
    return;
  }
  const binding = ledger.bindingOf(call.key);
  if (binding && !sameCall(binding, call)) {
    ledger.count("conflicts");
    log("conflict");
    await reply(partner, res, conflict(call, binding));
    return;
  }
  if (binding?.result.kind === "rejected") {
    ledger.count("rejections");
    log("rejected", { reason: binding.result.reason, sticky: true });
    await reply(partner, res, rejected(binding.result));
    return;
  }

  const allowed = isUndoOperation(call.operation) && !partner.undoRefusals ? UNDO_FAULTS : FAULT_KINDS;
  const decision = decideFault(partner.faults, partner.seed, call.key, n, allowed);
  if (decision.kind === "transient") {
    ledger.count("transientFaults");
    log(decision.throttled ? "throttled" : "unavailable", { fault: "transient" });
    await reply(partner, res, decision.throttled ? THROTTLED : UNAVAILABLE);
    return;
  }
  if (decision.kind === "permanent" && !binding) {
    const reason = simulatedAnswerOf(call.operation).rejection;
    const result = ledger.reject(call.key, call.operation, call.orderId, call.target, reason);
    ledger.count("rejections");
    log("rejected", { reason, fault: "permanent" });
    await reply(partner, res, rejected(result));
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
    await durable(partner);
    req.socket.destroy();
    return;
  }
  if (fault === "slow") {
    partner.ledger.count("slowReplies");
    await durable(partner);
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
  await reply(partner, res, { status: 200, body: successBody(result, replayed) });
}

function apply(partner: PartnerRuntime, call: Call): StoredResult {
  const { operation, key, orderId, target } = call;
  if (isUndoOperation(operation)) return partner.ledger.applyUndo(key, operation, orderId, target ?? "");
  return partner.ledger.applyEffect(key, operation, orderId, partner.clock.now());
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

/** What `/health` answers once the books take no more changes, so that the platform recycles the process. */
function unhealthy(failure: Error): Answer {
  return { status: 503, body: { status: "unhealthy", reason: failure.message } };
}

function booksUnavailable(failure: Error): Answer {
  return {
    status: 503,
    body: {
      error: "books-unavailable",
      message: `the partner cannot write its books and must be restarted: ${failure.message}`,
    },
  };
}

const UNAVAILABLE: Answer = {
  status: 503,
  body: { error: "unavailable", message: "the partner is temporarily unavailable; retry later" },
};

/** The answer to a call during an outage: come back when it is over. */
function down(outage: PartnerOutage, now: Date): Answer {
  const left = Math.max(1, Math.ceil((Date.parse(outage.until) - now.getTime()) / 1000));
  return {
    status: 503,
    body: { error: "outage", message: `the partner is down until ${outage.until}`, until: outage.until },
    headers: { "Retry-After": String(left) },
  };
}

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
