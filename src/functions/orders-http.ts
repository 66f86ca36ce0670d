import azureFunctions from "@azure/functions";
import { OPERATOR_ROUTES, ORDER_ROUTE, ORDERS_ROUTE, STATS_ROUTE } from "../scheduler/orders-api.js";
import type { AzureApp } from "./azure-app.js";
import { FUNCTION_NAMES } from "./function-names.js";

/**
 * `POST /api/orders`, `GET /api/orders`, `GET /api/orders/{orderId}` and `GET /api/stats`, each behind a function key; the operator
 * commands (`POST /api/orders/{orderId}/resubmit` and `/compensate`) behind the app's admin key.
 */
export function registerOrdersHttp(handlers: AzureApp["ordersHttp"]): void {
  azureFunctions.app.http(FUNCTION_NAMES.postOrder, {
    methods: ["POST"],
    route: ORDERS_ROUTE,
    authLevel: "function",
    handler: (request) => handlers.postOrder(request),
  });
  azureFunctions.app.http(FUNCTION_NAMES.listOrders, {
    methods: ["GET"],
    route: ORDERS_ROUTE,
    authLevel: "function",
    handler: (request) => handlers.listOrders(request),
  });
  azureFunctions.app.http(FUNCTION_NAMES.getStats, {
    methods: ["GET"],
    route: STATS_ROUTE,
    authLevel: "function",
    handler: () => handlers.stats(),
  });
  azureFunctions.app.http(FUNCTION_NAMES.getOrder, {
    methods: ["GET"],
    route: ORDER_ROUTE,
    authLevel: "function",
    handler: (request) => handlers.getOrder(request),
  });
  azureFunctions.app.http(FUNCTION_NAMES.resubmitOrder, {
    methods: ["POST"],
    route: OPERATOR_ROUTES.resubmit,
    authLevel: "admin",
    handler: (request) => handlers.operatorCommand("resubmit", request),
  });
  azureFunctions.app.http(FUNCTION_NAMES.compensateOrder, {
    methods: ["POST"],
    route: OPERATOR_ROUTES.compensate,
    authLevel: "admin",
    handler: (request) => handlers.operatorCommand("compensate", request),
  });
}
