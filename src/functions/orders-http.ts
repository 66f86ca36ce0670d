import azureFunctions from "@azure/functions";
import { ORDER_ROUTE, ORDERS_ROUTE } from "../scheduler/orders-api.js";
import type { AzureApp } from "./azure-app.js";
import { FUNCTION_NAMES } from "./function-names.js";

/** `POST /api/orders` and `GET /api/orders/{orderId}`, each behind a function key. */
export function registerOrdersHttp(handlers: AzureApp["ordersHttp"]): void {
  azureFunctions.app.http(FUNCTION_NAMES.postOrder, {
    methods: ["POST"],
    route: ORDERS_ROUTE,
    authLevel: "function",
    handler: (request) => handlers.postOrder(request),
  });
  azureFunctions.app.http(FUNCTION_NAMES.getOrder, {
    methods: ["GET"],
    route: ORDER_ROUTE,
    authLevel: "function",
    handler: (request) => handlers.getOrder(request),
  });
}
