import { registerAgentQueues } from "./agent-queues.js";
import type { AzureApp } from "./azure-app.js";
import { registerOrderProcessing } from "./order-processing.js";
import { registerOrdersHttp } from "./orders-http.js";
import { registerPartnerHttp } from "./partner-http.js";
import { registerSubmitOrder } from "./submit-order.js";
import { registerTimers } from "./timers.js";

/** Registers every function of the Azure app, each trigger group with its own handlers. */
export function registerFunctions(app: AzureApp): void {
  registerSubmitOrder(app.submission);
  registerTimers(app.timers);
  registerAgentQueues(app.agentQueues);
  registerOrdersHttp(app.ordersHttp);
  registerPartnerHttp(app.partnerHttp);
  registerOrderProcessing(app.activities, app.durableOf);
}
