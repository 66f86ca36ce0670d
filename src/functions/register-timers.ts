import azureFunctions from "@azure/functions";
import * as df from "durable-functions";
import { TIMER_SCHEDULE_SETTINGS } from "../config/names.js";
import type { AzureApp } from "./azure-app.js";
import { FUNCTION_NAMES } from "./function-names.js";

/** The starter, the Supervisor and retention, each on a schedule read from an app setting. */
export function registerTimers(handlers: AzureApp["timers"]): void {
  azureFunctions.app.timer(FUNCTION_NAMES.starter, {
    schedule: `%${TIMER_SCHEDULE_SETTINGS.starter}%`,
    extraInputs: [df.input.durableClient()],
    handler: (timer, context) => handlers.runStarter(timer, context),
  });
  azureFunctions.app.timer(FUNCTION_NAMES.supervisor, {
    schedule: `%${TIMER_SCHEDULE_SETTINGS.supervisor}%`,
    // The durable client tells the Supervisor whether an expired attempt's host was down (supervisor/interruptions.ts).
    extraInputs: [df.input.durableClient()],
    handler: (timer, context) => handlers.runSupervisor(timer, context),
  });
  azureFunctions.app.timer(FUNCTION_NAMES.retention, {
    schedule: `%${TIMER_SCHEDULE_SETTINGS.retention}%`,
    extraInputs: [df.input.durableClient()],
    handler: (timer, context) => handlers.runRetention(timer, context),
  });
}
