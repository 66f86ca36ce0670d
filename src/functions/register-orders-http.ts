import azureFunctions, {
  type HttpRequest,
  type HttpResponseInit,
  type InvocationContext,
} from "@azure/functions";
import {
  HISTORY_ROUTE,
  OPERATOR_ROUTES,
  ORDER_ROUTE,
  ORDERS_ROUTE,
  STATS_ROUTE,
} from "../operator/orders-api.js";
import type { AzureApp } from "./azure-app.js";
import { FUNCTION_NAMES } from "./function-names.js";

type Handlers = AzureApp["ordersHttp"];

interface HttpRoute {
  readonly name: string;
  readonly method: "GET" | "POST";
  readonly route: string;
  readonly authLevel: "function" | "admin";
  readonly handle: (
    handlers: Handlers,
    request: HttpRequest,
    context: InvocationContext,
  ) => Promise<HttpResponseInit>;
}

/** The orders API's routes: reads and submissions behind a function key, operator commands behind the admin key. */
const ROUTES: readonly HttpRoute[] = [
  {
    name: FUNCTION_NAMES.postOrder,
    method: "POST",
    route: ORDERS_ROUTE,
    authLevel: "function",
    handle: (h, r, c) => h.postOrder(r, c),
  },
  {
    name: FUNCTION_NAMES.listOrders,
    method: "GET",
    route: ORDERS_ROUTE,
    authLevel: "function",
    handle: (h, r) => h.listOrders(r),
  },
  {
    // The page and its style and code are one function, so the key the page was opened with (`?code=`,
    // which may be this function's own key) opens its files too: index.html asks for them with the key
    // in their query, as a <link> or <script> cannot send a header. A second function for the files
    // would need `anonymous` or a key of its own.
    name: FUNCTION_NAMES.dashboard,
    method: "GET",
    route: "dashboard/{file?}",
    authLevel: "function",
    handle: (h, r) => h.dashboard(r),
  },
  {
    name: FUNCTION_NAMES.getStats,
    method: "GET",
    route: STATS_ROUTE,
    authLevel: "function",
    handle: (h) => h.stats(),
  },
  {
    name: FUNCTION_NAMES.getOrder,
    method: "GET",
    route: ORDER_ROUTE,
    authLevel: "function",
    handle: (h, r) => h.getOrder(r),
  },
  {
    name: FUNCTION_NAMES.getOrderHistory,
    method: "GET",
    route: HISTORY_ROUTE,
    authLevel: "function",
    handle: (h, r) => h.getHistory(r),
  },
  {
    name: FUNCTION_NAMES.resubmitOrder,
    method: "POST",
    route: OPERATOR_ROUTES.resubmit,
    authLevel: "admin",
    handle: (h, r) => h.operatorCommand("resubmit", r),
  },
  {
    name: FUNCTION_NAMES.compensateOrder,
    method: "POST",
    route: OPERATOR_ROUTES.compensate,
    authLevel: "admin",
    handle: (h, r) => h.operatorCommand("compensate", r),
  },
];

export function registerOrdersHttp(handlers: Handlers): void {
  for (const { name, method, route, authLevel, handle } of ROUTES) {
    azureFunctions.app.http(name, {
      methods: [method],
      route,
      authLevel,
      handler: (request, context) => handle(handlers, request, context),
    });
  }
}
