import azureFunctions from "@azure/functions";
import * as df from "durable-functions";
import { CONNECTION_NAMES, QUEUE_NAMES } from "../config/names.js";
import type { AzureApp } from "./azure-app.js";
import { FUNCTION_NAMES } from "./function-names.js";

/** The Agent's queue form: the request-queue worker, and the response queue that wakes the orchestration. */
export function registerAgentQueues(handlers: AzureApp["agentQueues"]): void {
  azureFunctions.app.serviceBusQueue(FUNCTION_NAMES.agentWorker, {
    connection: CONNECTION_NAMES.serviceBus,
    queueName: QUEUE_NAMES.agentRequests,
    handler: (message, context) => handlers.agentWorker(message, context),
  });
  azureFunctions.app.serviceBusQueue(FUNCTION_NAMES.agentReplies, {
    connection: CONNECTION_NAMES.serviceBus,
    queueName: QUEUE_NAMES.agentResponses,
    extraInputs: [df.input.durableClient()],
    handler: (message, context) => handlers.agentReplies(message, context),
  });
}
