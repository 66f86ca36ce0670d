import type { AzureApp } from "./azure-app.js";
import { registerAgentQueues } from "./register-agent-queues.js";
import { registerOrderProcessing } from "./register-order-processing.js";
import { registerOrdersHttp } from "./register-orders-http.js";
import { registerPartnerHttp } from "./register-partner-http.js";
import { registerSubmitOrder } from "./register-submit-order.js";
import { registerTimers } from "./register-timers.js";

/** Registers every function of the Azure app, each trigger group with its own handlers. */
export function registerFunctions(app: AzureApp): void {
  registerSubmitOrder(app.submission);
  registerTimers(app.timers);
  registerAgentQueues(app.agentQueues);
  registerOrdersHttp(app.ordersHttp);
  registerPartnerHttp(app.partnerHttp);
  registerOrderProcessing(app.activities, app.durableOf);
}
