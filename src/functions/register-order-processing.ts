import type { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { type ActivityInvocation, bindActivities } from "../orchestrators/activity-contract.js";
import type { OrderActivities } from "../orchestrators/order-activities.js";
import { ORDER_ACTIVITIES } from "../orchestrators/order-contracts.js";
import { ORDER_ORCHESTRATORS } from "../orchestrators/order-processing.js";
import type { DurableClient } from "../ports/durable-client.js";

/** The activities that can take an order out of `Processing`, and then nudge the starter. */
const SETTLING_ACTIVITIES: ReadonlySet<string> = new Set([
  ORDER_ACTIVITIES.advance.name,
  ORDER_ACTIVITIES.runStep.name,
  ORDER_ACTIVITIES.startAttempt.name,
  ORDER_ACTIVITIES.fail.name,
  ORDER_ACTIVITIES.deferStep.name,
  ORDER_ACTIVITIES.beginCompensation.name,
]);

/**
 * Registers the order orchestration of every workflow version still in use, and their activities
 * (shared by the versions), with Durable Functions. Registration only:
 * the Azure app calls this with activities wired to Azure stores, the embedded host with SQLite ones.
 * Each activity's input is validated against its contract before the implementation sees it; the
 * settling activities get a durable client binding of their own, for the starter they nudge.
 */
export function registerOrderProcessing(
  activities: OrderActivities,
  durableOf: (context: InvocationContext) => DurableClient,
): void {
  for (const [name, orchestrator] of ORDER_ORCHESTRATORS) df.app.orchestration(name, orchestrator);
  for (const { name, handler } of bindActivities(ORDER_ACTIVITIES, activities)) {
    if (!SETTLING_ACTIVITIES.has(name)) {
      df.app.activity(name, { handler: (input) => handler(input, withoutDurableClient(name)) });
      continue;
    }
    df.app.activity(name, {
      extraInputs: [df.input.durableClient()],
      handler: (input, context) => handler(input, { durableClient: () => durableOf(context) }),
    });
  }
}

function withoutDurableClient(name: string): ActivityInvocation {
  return {
    durableClient: () => {
      throw new Error(`activity ${name} has no durable client binding`);
    },
  };
}
