import { activityTarget } from "./activities/activity-target.js";
import { httpTarget } from "./orders/http-target.js";
import { serviceBusTarget } from "./orders/service-bus-target.js";
import { sqliteQueueTarget } from "./orders/sqlite-queue-target.js";
import { replyTarget } from "./replies/reply-target.js";
import { type Fuzzable, fuzzable } from "./run-target.js";

/** Every target `npm run fuzz` drives, in the order they run. */
export function allTargets(): Fuzzable[] {
  return [
    fuzzable(httpTarget()),
    fuzzable(sqliteQueueTarget()),
    fuzzable(serviceBusTarget()),
    fuzzable(replyTarget()),
    fuzzable(activityTarget()),
  ];
}
