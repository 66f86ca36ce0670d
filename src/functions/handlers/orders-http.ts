import type { HttpRequest, HttpResponseInit, InvocationContext } from "@azure/functions";
import { DASHBOARD_FILES, webFolder } from "../../adapters/web/web-assets.js";
import type { SharedBreaker } from "../../breaker/shared-breaker.js";
import { QUEUE_NAMES } from "../../config/names.js";
import type { BreakerView } from "../../domain/breaker-view.js";
import { MAX_ORDER_MESSAGE_BYTES } from "../../domain/order.js";
import { OPERATIONS_BY_STEP } from "../../domain/partner-operations.js";
import type { OperatorCommand, OperatorCommands } from "../../operator/operator-commands.js";
import {
  type ApiAnswer,
  bodyTooLarge,
  createOrdersApi,
  MAX_OPERATOR_BODY_BYTES,
  orderTooLarge,
} from "../../operator/orders-api.js";
import { reusedReading } from "../../operator/reused-reading.js";
import { createStatsReadings, type StatsReadings } from "../../operator/stats.js";
import { orderQueueMessage } from "../../scheduler/order-message-id.js";
import { type AzureServices, telemetryOf } from "../azure-services.js";

/** The orders API's routes over the shared orders API, and the dashboard's files. */
export function createOrdersHttpHandlers(services: AzureServices, operator: OperatorCommands) {
  const dashboardFiles = webFolder("dashboard", DASHBOARD_FILES);
  const orders = services.queue(QUEUE_NAMES.orders);
  const api = createOrdersApi({
    logger: services.logger,
    telemetry: telemetryOf(services),
    backend: {
      post: (body, traceparent) => orders.send(orderQueueMessage(body, traceparent)),
      getRecord: (orderId) => services.states.get(orderId),
      operator,
      listRecords: (query) => services.stateReadModel.listRecent(query),
      countByState: () => services.stateReadModel.countByState(),
      maxInFlight: services.settings.pipeline.maxInFlight,
      countPending: reusedReading(services.clock, PENDING_COUNT_REUSE_MS, () =>
        services.stateReadModel.countInState("Pending"),
      ),
      maxPending: services.settings.pipeline.maxPending,
      stats: statsReadings(services),
    },
  });
  return {
    /** The host's trace of the request is the parent of the order's; a caller's header otherwise. */
    async postOrder(request: HttpRequest, context?: InvocationContext): Promise<HttpResponseInit> {
      const text = await bodyOf(request, MAX_ORDER_MESSAGE_BYTES);
      if (text === undefined) return toResponse(orderTooLarge());
      const traceparent = context?.traceContext?.traceParent ?? request.headers.get("traceparent");
      return toResponse(await api.postOrder(text, traceparent));
    },
    /** `GET /api/dashboard` (the page) and `GET /api/dashboard/{file}` (its style and code). */
    async dashboard(request: HttpRequest): Promise<HttpResponseInit> {
      const asset = await dashboardFiles(request.params.file);
      if (!asset) {
        return { status: 404, jsonBody: { error: "not found", path: new URL(request.url).pathname } };
      }
      return {
        status: 200,
        headers: { "Content-Type": asset.contentType, "Cache-Control": "no-store" },
        body: asset.body,
      };
    },
    async stats(): Promise<HttpResponseInit> {
      return toResponse(await api.stats());
    },
    async listOrders(request: HttpRequest): Promise<HttpResponseInit> {
      return toResponse(await api.listOrders(new URL(request.url).searchParams));
    },
    async getHistory(request: HttpRequest): Promise<HttpResponseInit> {
      return toResponse(await api.getHistory(orderSegment(request, 2)));
    },
    async getOrder(request: HttpRequest): Promise<HttpResponseInit> {
      return toResponse(await api.getOrder(orderSegment(request, 1)));
    },
    /** `POST /api/orders/{orderId}/resubmit` or `/compensate`, as the function registered for it. */
    async operatorCommand(command: OperatorCommand, request: HttpRequest): Promise<HttpResponseInit> {
      const text = await bodyOf(request, MAX_OPERATOR_BODY_BYTES);
      if (text === undefined) return toResponse(bodyTooLarge(MAX_OPERATOR_BODY_BYTES));
      return toResponse(await api.operatorCommand(command, orderSegment(request, 2), text));
    },
  };
}

/**
 * The statistics on Service Bus and Blob Storage: the dead-letter queue of every queue the app consumes
 * (and of invalid-messages, where parked messages expire to), the invalid-messages queue itself for the
 * messages a handler refused (the trigger cannot dead-letter them; `runQueueHandler` moves them there),
 * and the scan journal beside the Supervisor's lease.
 */
function statsReadings(services: AzureServices): StatsReadings {
  const queues = [
    QUEUE_NAMES.orders,
    QUEUE_NAMES.agentRequests,
    QUEUE_NAMES.agentResponses,
    QUEUE_NAMES.invalidMessages,
  ];
  return createStatsReadings({
    clock: services.clock,
    states: services.stateReadModel,
    journal: services.scanJournal,
    deadLetterQueues: Object.fromEntries(queues.map((name) => [name, services.queue(name).deadLetterQueue])),
    parkedQueue: services.queue(QUEUE_NAMES.invalidMessages),
    defaultWorkflowVersion: services.settings.pipeline.workflowVersion,
    ...(services.breaker ? { breakers: viewsOf(services.breaker) } : {}),
  });
}

function viewsOf(breaker: SharedBreaker): () => Promise<readonly BreakerView[]> {
  return () => breaker.views(OPERATIONS_BY_STEP);
}

/** The body, or undefined when it is longer than `maxBytes` (by its Content-Length, before it is read). */
export async function bodyOf(request: HttpRequest, maxBytes: number): Promise<string | undefined> {
  if (Number(request.headers.get("content-length") ?? 0) > maxBytes) return undefined;
  const text = await request.text();
  return Buffer.byteLength(text) > maxBytes ? undefined : text;
}

/**
 * The order id's raw path segment, `fromEnd` segments from the end of the path: route parameters arrive
 * decoded, and the API decodes (and checks) the id itself.
 */
function orderSegment(request: HttpRequest, fromEnd: number): string {
  const segments = new URL(request.url).pathname.split("/");
  return segments[segments.length - fromEnd] ?? "";
}

export function toResponse(answer: ApiAnswer): HttpResponseInit {
  return {
    status: answer.status,
    jsonBody: answer.body,
    ...(answer.headers ? { headers: { ...answer.headers } } : {}),
  };
}

/** How long a count of the backlog is reused: every submission asks, and a count on Cosmos DB costs RUs. */
const PENDING_COUNT_REUSE_MS = 1_000;
