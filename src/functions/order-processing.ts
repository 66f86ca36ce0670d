import * as df from "durable-functions";
import type { createOrderActivities } from "../orchestrators/order-activities.js";
import { ACTIVITIES, ORDER_PROCESSING, orderProcessing } from "../orchestrators/order-processing.js";

/**
 * Registers the order orchestration and its activities with Durable Functions. Registration only:
 * the Azure app calls this with activities wired to Azure stores, the embedded host with SQLite ones.
 */
export function registerOrderProcessing(activities: ReturnType<typeof createOrderActivities>): void {
  df.app.orchestration(ORDER_PROCESSING, orderProcessing);
  for (const name of Object.values(ACTIVITIES)) {
    const handler = activities[name];
    df.app.activity(name, { handler: (input: unknown) => handler(input as never) });
  }
}
