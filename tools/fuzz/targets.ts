import { httpTarget } from "./orders/http-target.js";
import { serviceBusTarget } from "./orders/service-bus-target.js";
import { sqliteQueueTarget } from "./orders/sqlite-queue-target.js";
import { replyTarget } from "./replies/reply-target.js";
import type { FuzzTarget } from "./target.js";

/** Every target `npm run fuzz` drives, in the order they run. */
export function allTargets(): FuzzTarget<never>[] {
  return [
    httpTarget(),
    sqliteQueueTarget(),
    serviceBusTarget(),
    replyTarget(),
  ] as unknown as FuzzTarget<never>[];
}
