import { ACTIVITIES } from "../orchestrators/order-processing.js";
import { registerAgentQueues } from "./agent-queues.js";
import type { AzureHandlers } from "./handlers.js";
import { registerOrderProcessing } from "./order-processing.js";
import { registerOrdersHttp } from "./orders-http.js";
import { registerSubmitOrder } from "./submit-order.js";
import { registerTimers } from "./timers.js";

/**
 * Registers every function of the Azure app. `handlers` is called on the first invocation, not here,
 * so registration needs no connection to anything.
 */
export function registerFunctions(handlers: () => AzureHandlers): void {
  registerSubmitOrder(handlers);
  registerTimers(handlers);
  registerAgentQueues(handlers);
  registerOrdersHttp(handlers);
  const activities = Object.fromEntries(
    Object.values(ACTIVITIES).map((name) => [name, (input: never) => handlers().activities[name](input)]),
  ) as AzureHandlers["activities"];
  registerOrderProcessing(activities);
}
