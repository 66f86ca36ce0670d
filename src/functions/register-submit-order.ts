import azureFunctions from "@azure/functions";
import * as df from "durable-functions";
import { CONNECTION_NAMES, QUEUE_NAMES } from "../config/names.js";
import type { AzureApp } from "./azure-app.js";
import { FUNCTION_NAMES } from "./function-names.js";

/** Orders queue (peek-lock) → submission. */
export function registerSubmitOrder(handlers: AzureApp["submission"]): void {
  azureFunctions.app.serviceBusQueue(FUNCTION_NAMES.submitOrder, {
    connection: CONNECTION_NAMES.serviceBus,
    queueName: QUEUE_NAMES.orders,
    extraInputs: [df.input.durableClient()],
    handler: (message, context) => handlers.submitOrder(message, context),
  });
}
