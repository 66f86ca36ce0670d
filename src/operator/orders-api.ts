/**
 * The orders HTTP API's decisions, shared by the Functions HTTP triggers and the embedded host's server:
 * each host reads the request and writes the answer; what is answered is decided here. The routes and
 * their answers: docs/operators.md, "The HTTP API".
 */
import { parseOperatorRequest } from "../domain/operator-request.js";
import { MAX_ORDER_MESSAGE_BYTES, parseOrderMessage } from "../domain/order.js";
import { type ProcessState, type StoredStateRecord, withoutStoreMetadata } from "../domain/state-record.js";
import type { Logger } from "../ports/logger.js";
import type { JsonValue, SendResult } from "../ports/message-queue.js";
import type { RecentQuery } from "../ports/state-read-model.js";
import type { Page } from "../ports/state-store.js";
import { InvalidContinuationTokenError } from "../ports/store-errors.js";
import {
  contextFrom,
  globalTelemetry,
  inSpan,
  SpanKind,
  SpanStatusCode,
  type Telemetry,
  traceparentOf,
} from "../telemetry/telemetry.js";
import type { ApiAnswer } from "./api-answer.js";
import { invalidList, listQuery } from "./list-query.js";
import type { OperatorCommand, OperatorCommands, OperatorOutcome } from "./operator-commands.js";
import type { StatsReadings } from "./stats.js";

export type { ApiAnswer } from "./api-answer.js";

export const ORDERS_ROUTE = "orders";
export const ORDER_ROUTE = "orders/{orderId}";
export const HISTORY_ROUTE = `${ORDER_ROUTE}/history`;
export const ORDERS_PATH = `/api/${ORDERS_ROUTE}`;
export const STATS_ROUTE = "stats";
export const STATS_PATH = `/api/${STATS_ROUTE}`;
/** The route of each operator command, under the order's own route. */
export const OPERATOR_ROUTES: Readonly<Record<OperatorCommand, string>> = {
  resubmit: `${ORDER_ROUTE}/resubmit`,
  compensate: `${ORDER_ROUTE}/compensate`,
};
export const OPERATOR_COMMANDS: readonly OperatorCommand[] = ["resubmit", "compensate"];
const MAX_ORDER_ID_LENGTH = 64;
/** Operator command bodies are small: who and why. */
export const MAX_OPERATOR_BODY_BYTES = 4 * 1024;

/** What the API needs from its host. */
export interface OrdersApiBackend {
  /** Puts an order message on the orders queue, with the `traceparent` its submission's span joins. */
  post(body: JsonValue, traceparent: string | null): Promise<SendResult>;
  getRecord(orderId: string): Promise<StoredStateRecord | undefined>;
  /** The operator commands, on the host's own state store. */
  readonly operator: OperatorCommands;
  listRecords(query: RecentQuery): Promise<Page<StoredStateRecord>>;
  countByState(): Promise<Readonly<Record<ProcessState, number>>>;
  /** MAX_IN_FLIGHT: the starter claims no more once this many orders are `Processing`. */
  readonly maxInFlight: number;
  /** How many orders are `Pending` (a host may answer from a count a second old). */
  countPending(): Promise<number>;
  /** MAX_PENDING: past this backlog, new orders are refused with 429. */
  readonly maxPending: number;
  /** The statistics beyond the counts: the oldest `Pending` order, the queues, the last scan, throughput. */
  readonly stats: StatsReadings;
}

export interface OrdersApi {
  /**
   * `text` is the request body, already known to be at most MAX_ORDER_MESSAGE_BYTES long;
   * `traceparent` the caller's trace (the request header, or the Functions host's invocation), if any.
   */
  postOrder(text: string, traceparent?: string | null): Promise<ApiAnswer>;
  /** `encodedId` is the path segment as it arrived, still percent-encoded. */
  getOrder(encodedId: string): Promise<ApiAnswer>;
  getHistory(encodedId: string): Promise<ApiAnswer>;
  /** `params` is the request's query string, parsed. */
  listOrders(params: URLSearchParams): Promise<ApiAnswer>;
  stats(): Promise<ApiAnswer>;
  /** `text` is the request body, at most MAX_OPERATOR_BODY_BYTES long. */
  operatorCommand(command: OperatorCommand, encodedId: string, text: string): Promise<ApiAnswer>;
}

export function createOrdersApi(deps: {
  backend: OrdersApiBackend;
  logger: Logger;
  /** Where the submission's HTTP span goes (default: the global providers). */
  telemetry?: Telemetry;
}): OrdersApi {
  const context: ApiContext = { backend: deps.backend, ask: askerFor(deps.logger), logger: deps.logger };
  return {
    postOrder: (text, traceparent) =>
      inSpan(
        (deps.telemetry ?? globalTelemetry()).tracer,
        `POST /api/${ORDERS_ROUTE}`,
        {
          kind: SpanKind.SERVER,
          parent: contextFrom(traceparent),
          attributes: { "http.request.method": "POST", "http.route": `/api/${ORDERS_ROUTE}` },
        },
        async (span) => {
          const answer = await postOrderAnswer(context, text, traceparentOf(span));
          span.setAttribute("http.response.status_code", answer.status);
          if (answer.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          return answer;
        },
      ),
    getOrder: (encodedId) => getOrderAnswer(context, encodedId, (record) => withoutStoreMetadata(record)),
    getHistory: (encodedId) =>
      getOrderAnswer(context, encodedId, (record) => ({
        orderId: record.orderId,
        entries: record.history,
        earlier: record.historySummary,
      })),
    listOrders: (params) => listOrdersAnswer(context, params),
    stats: () => statsAnswer(context),
    operatorCommand: (command, encodedId, text) => operatorCommandAnswer(context, command, encodedId, text),
  };
}

/** What each route's answer is decided with: the host's backend, a way to ask it, and the log. */
interface ApiContext {
  readonly backend: OrdersApiBackend;
  readonly ask: Asker;
  readonly logger: Logger;
}

type Asker = <T>(
  operation: string,
  fields: Record<string, unknown>,
  call: () => Promise<T>,
  message: string,
) => Promise<{ ok: true; value: T } | { ok: false; answer: ApiAnswer }>;

/** The backend's answer, or the answer to give when it failed: 503 (logged), or 400 for a foreign token. */
function askerFor(logger: Logger): Asker {
  return async (operation, fields, call, message) => {
    try {
      return { ok: true, value: await call() };
    } catch (error) {
      if (error instanceof InvalidContinuationTokenError) {
        const detail = `is not a token of this list: ${error.message}`;
        return { ok: false, answer: invalidList("continuation", "format", detail) };
      }
      logger.error("http.backend-failed", { operation, ...fields, error });
      return { ok: false, answer: unavailable(message) };
    }
  };
}

async function postOrderAnswer(
  { backend, ask }: ApiContext,
  text: string,
  traceparent: string | null,
): Promise<ApiAnswer> {
  const parsed = parseOrderMessage(text);
  if (!parsed.ok) {
    return { status: 400, body: { error: "invalid order message", issues: parsed.error.issues } };
  }
  const { orderId } = parsed.value;
  const pending = await ask(
    "countPending",
    { orderId },
    () => backend.countPending(),
    "the backlog could not be read; try again",
  );
  if (!pending.ok) return pending.answer;
  if (pending.value >= backend.maxPending) return backlogFull(pending.value, backend.maxPending);
  const sent = await ask(
    "post",
    { orderId },
    () => backend.post(JSON.parse(text) as JsonValue, traceparent),
    "the order could not be queued; try again",
  );
  if (!sent.ok) return sent.answer;
  const statusUrl = `${ORDERS_PATH}/${encodeURIComponent(orderId)}`;
  return {
    status: 202,
    body: { orderId, status: "accepted", statusUrl },
    headers: { Location: statusUrl },
  };
}

/** The record, shown as `view` shows it; 404 when there is none. */
async function getOrderAnswer(
  { backend, ask }: ApiContext,
  encodedId: string,
  view: (record: StoredStateRecord) => unknown,
): Promise<ApiAnswer> {
  const orderId = decodeOrderId(encodedId);
  if (typeof orderId !== "string") return orderId;
  const read = await ask(
    "getRecord",
    { orderId },
    () => backend.getRecord(orderId),
    "the order state could not be read; try again",
  );
  if (!read.ok) return read.answer;
  if (!read.value) return { status: 404, body: { error: "order not found", orderId } };
  return { status: 200, body: view(read.value) };
}

async function listOrdersAnswer({ backend, ask }: ApiContext, params: URLSearchParams): Promise<ApiAnswer> {
  const query = listQuery(params);
  if ("status" in query) return query;
  const page = await ask(
    "listRecords",
    {},
    () => backend.listRecords(query),
    "the orders could not be listed; try again",
  );
  if (!page.ok) return page.answer;
  const { items, continuationToken } = page.value;
  return {
    status: 200,
    body: { items: items.map(withoutStoreMetadata), continuation: continuationToken },
  };
}

/**
 * The state store's figures, or 503 when it cannot answer; then the queues' and the Supervisor's, each
 * of which may fail on its own service: it is then null and named in `unavailable` (and logged).
 */
async function statsAnswer({ backend, ask, logger }: ApiContext): Promise<ApiAnswer> {
  const { stats } = backend;
  const store = await ask(
    "stats",
    {},
    () =>
      Promise.all([
        backend.countByState(),
        stats.oldestPending(),
        stats.throughput(),
        stats.workflowVersions(),
        stats.finishedLastHour(),
      ]),
    "the counts could not be read; try again",
  );
  if (!store.ok) return store.answer;
  const [counts, oldestPending, throughput, workflowVersions, finishedLastHour] = store.value;
  const failed = new Set<string>();
  const orNull = <T>(figure: string, read: () => Promise<T>): Promise<T | null> =>
    read().catch((error: unknown) => {
      logger.error("http.backend-failed", { operation: `stats.${figure}`, error });
      failed.add(figure);
      return null;
    });
  const readBreakers = stats.breakers;
  const [messages, lastScan, breakers] = await Promise.all([
    orNull("messages", () => stats.messages()),
    orNull("lastScan", () => stats.lastScan()),
    readBreakers ? orNull("breakers", readBreakers) : undefined,
  ]);
  const unavailable = ["messages", "lastScan", "breakers"].filter((figure) => failed.has(figure));
  const inFlight = { processing: counts.Processing, max: backend.maxInFlight };
  const body = {
    counts,
    inFlight,
    workflowVersions,
    oldestPending,
    messages,
    lastScan,
    throughput,
    finishedLastHour,
    ...(breakers === undefined ? {} : { breakers }),
    unavailable,
  };
  return { status: 200, body };
}

async function operatorCommandAnswer(
  { backend, ask }: ApiContext,
  command: OperatorCommand,
  encodedId: string,
  text: string,
): Promise<ApiAnswer> {
  const orderId = decodeOrderId(encodedId);
  if (typeof orderId !== "string") return orderId;
  const parsed = parseOperatorRequest(parseJson(text));
  if (!parsed.ok) {
    return { status: 400, body: { error: "invalid operator command", issues: parsed.error.issues } };
  }
  const { operator, reason } = parsed.value;
  const outcome = await ask(
    command,
    { orderId },
    () => backend.operator[command](orderId, operator, reason),
    "the command could not be applied; try again",
  );
  return outcome.ok ? operatorAnswer(command, orderId, outcome.value) : outcome.answer;
}

/** Seconds a refused submitter is asked to wait before it tries again. */
export const BACKLOG_RETRY_AFTER_SECONDS = 5;

function backlogFull(pending: number, maxPending: number): ApiAnswer {
  return {
    status: 429,
    body: { error: "too many pending orders", pending, maxPending },
    headers: { "Retry-After": String(BACKLOG_RETRY_AFTER_SECONDS) },
  };
}

/** How an operator command's outcome is answered: 202, 404, 400 or 409. */
function operatorAnswer(command: OperatorCommand, orderId: string, outcome: OperatorOutcome): ApiAnswer {
  if (outcome.ok) {
    const statusUrl = `${ORDERS_PATH}/${encodeURIComponent(orderId)}`;
    return { status: 202, body: { orderId, command, processState: outcome.record.processState, statusUrl } };
  }
  if (outcome.reason === "notFound") return { status: 404, body: { error: "order not found", orderId } };
  if (outcome.reason === "invalid") {
    const issues = [{ field: "", rule: "invalid", message: outcome.message }];
    return { status: 400, body: { error: "invalid operator command", issues } };
  }
  return { status: 409, body: { error: "command refused", command, orderId, message: outcome.message } };
}

/** The decoded order id, or the 400 answer for one that cannot be. */
function decodeOrderId(encodedId: string): string | ApiAnswer {
  const orderId = decodePathSegment(encodedId);
  if (orderId === undefined) return invalidOrderId("format", "is not correctly percent-encoded");
  if (orderId.length > MAX_ORDER_ID_LENGTH) {
    return invalidOrderId("max", `must be at most ${MAX_ORDER_ID_LENGTH} characters long`);
  }
  return orderId;
}

/** The JSON value of `text`, or the text itself when it is not JSON (validation then names it). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The answer to a body longer than MAX_ORDER_MESSAGE_BYTES; the host stops reading it. */
export function orderTooLarge(): ApiAnswer {
  return {
    status: 413,
    body: { error: "order message too large", maxBytes: MAX_ORDER_MESSAGE_BYTES },
    headers: { Connection: "close" },
  };
}

/** The answer to any other body longer than `maxBytes`; the host stops reading it. */
export function bodyTooLarge(maxBytes: number): ApiAnswer {
  return {
    status: 413,
    body: { error: "request body too large", maxBytes },
    headers: { Connection: "close" },
  };
}

function decodePathSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function invalidOrderId(rule: string, message: string): ApiAnswer {
  return { status: 400, body: { error: "invalid order id", issues: [{ field: "orderId", rule, message }] } };
}

function unavailable(message: string): ApiAnswer {
  return { status: 503, body: { error: "service unavailable", message } };
}
