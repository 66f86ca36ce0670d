import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { QUEUE_NAMES } from "../../config/names.js";
import { MAX_ORDER_MESSAGE_BYTES } from "../../domain/order.js";
import { DASHBOARD_PAGE } from "../../scheduler/dashboard-page.js";
import type { OperatorCommand, OperatorCommands } from "../../scheduler/operator-commands.js";
import { orderMessageId } from "../../scheduler/order-message-id.js";
import {
  type ApiAnswer,
  bodyTooLarge,
  createOrdersApi,
  MAX_OPERATOR_BODY_BYTES,
  orderTooLarge,
} from "../../scheduler/orders-api.js";
import type { AzureServices } from "../azure-services.js";

/** `POST /api/orders` and `GET /api/orders/{orderId}` over the shared orders API. */
export function createOrdersHttpHandlers(services: AzureServices, operator: OperatorCommands) {
  const orders = services.queue(QUEUE_NAMES.orders);
  const api = createOrdersApi({
    logger: services.logger,
    backend: {
      post: (body) => orders.send({ messageId: orderMessageId(body), body }),
      getRecord: (orderId) => services.states.get(orderId),
      operator,
      listRecords: (query) => services.states.listRecent(query),
      countByState: () => services.states.countByState(),
      maxInFlight: services.settings.pipeline.maxInFlight,
      countPending: pendingCount(services),
      maxPending: services.settings.pipeline.maxPending,
    },
  });
  return {
    async postOrder(request: HttpRequest): Promise<HttpResponseInit> {
      const declared = Number(request.headers.get("content-length") ?? 0);
      if (declared > MAX_ORDER_MESSAGE_BYTES) return toResponse(orderTooLarge());
      const text = await request.text();
      if (Buffer.byteLength(text) > MAX_ORDER_MESSAGE_BYTES) return toResponse(orderTooLarge());
      return toResponse(await api.postOrder(text));
    },
    async dashboard(): Promise<HttpResponseInit> {
      return {
        status: 200,
        headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" },
        body: DASHBOARD_PAGE,
      };
    },
    async stats(): Promise<HttpResponseInit> {
      return toResponse(await api.stats());
    },
    async listOrders(request: HttpRequest): Promise<HttpResponseInit> {
      return toResponse(await api.listOrders(new URL(request.url).searchParams));
    },
    async getHistory(request: HttpRequest): Promise<HttpResponseInit> {
      const segments = new URL(request.url).pathname.split("/");
      return toResponse(await api.getHistory(segments[segments.length - 2] ?? ""));
    },
    async getOrder(request: HttpRequest): Promise<HttpResponseInit> {
      // The raw path segment: route parameters arrive decoded, and the API decodes (and checks) it itself.
      const segment = new URL(request.url).pathname.split("/").pop() ?? "";
      return toResponse(await api.getOrder(segment));
    },
    /** `POST /api/orders/{orderId}/resubmit` or `/compensate`, as the function registered for it. */
    async operatorCommand(command: OperatorCommand, request: HttpRequest): Promise<HttpResponseInit> {
      const declared = Number(request.headers.get("content-length") ?? 0);
      if (declared > MAX_OPERATOR_BODY_BYTES) return toResponse(bodyTooLarge(MAX_OPERATOR_BODY_BYTES));
      const text = await request.text();
      if (Buffer.byteLength(text) > MAX_OPERATOR_BODY_BYTES)
        return toResponse(bodyTooLarge(MAX_OPERATOR_BODY_BYTES));
      const segments = new URL(request.url).pathname.split("/");
      return toResponse(await api.operatorCommand(command, segments[segments.length - 2] ?? "", text));
    },
  };
}

function toResponse(answer: ApiAnswer): HttpResponseInit {
  return {
    status: answer.status,
    jsonBody: answer.body,
    ...(answer.headers ? { headers: { ...answer.headers } } : {}),
  };
}

/** How long a count of the backlog is reused: every submission asks, and a count on Cosmos DB costs RUs. */
const PENDING_COUNT_REUSE_MS = 1_000;

/** The number of `Pending` orders, counted at most once a second per instance. */
function pendingCount(services: AzureServices): () => Promise<number> {
  let last: { readonly at: number; readonly count: Promise<number> } | null = null;
  return () => {
    const now = services.clock.now().getTime();
    if (!last || now - last.at >= PENDING_COUNT_REUSE_MS) {
      const count = services.states.countInState("Pending");
      last = { at: now, count };
      count.catch(() => {
        if (last?.count === count) last = null;
      });
    }
    return last.count;
  };
}
