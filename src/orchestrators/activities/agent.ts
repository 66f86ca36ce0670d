import type { ActivityImplementations } from "../activity-contract.js";
import type { OrderActivityContracts } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";

/** The Agent's two forms: called as an activity, or reached through its request queue. */
export function createAgentActivities(
  deps: OrderActivityDeps,
): Pick<ActivityImplementations<OrderActivityContracts>, "callAgent" | "sendAgentRequest"> {
  return {
    callAgent: (request) => deps.agent(request),
    sendAgentRequest: (request) => deps.sendAgentRequest(request),
  };
}
