import azureFunctions from "@azure/functions";
import { ORDER_ROUTE, ORDERS_ROUTE } from "../scheduler/orders-api.js";
import { FUNCTION_NAMES } from "./function-names.js";
import type { AzureHandlers } from "./handlers.js";

/** `POST /api/orders` and `GET /api/orders/{orderId}`, each behind a function key. */
export function registerOrdersHttp(handlers: () => AzureHandlers): void {
  azureFunctions.app.http(FUNCTION_NAMES.postOrder, {
    methods: ["POST"],
    route: ORDERS_ROUTE,
    authLevel: "function",
    handler: (request) => handlers().postOrder(request),
  });
  azureFunctions.app.http(FUNCTION_NAMES.getOrder, {
    methods: ["GET"],
    route: ORDER_ROUTE,
    authLevel: "function",
    handler: (request) => handlers().getOrder(request),
  });
}
