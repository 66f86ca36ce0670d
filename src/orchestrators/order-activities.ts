import { RecentRecords } from "../state/recent-records.js";
import { createAgentActivities } from "./activities/agent.js";
import { createAttemptActivities } from "./activities/attempt.js";
import { createCompensationActivities } from "./activities/compensation.js";
import type { OrderActivityDeps } from "./activities/deps.js";
import { createFailureActivities } from "./activities/failure.js";
import { createProgressActivities } from "./activities/progress.js";
import { createRecordActions } from "./activities/record-actions.js";
import { createUndoActivities } from "./activities/undo.js";
import type { ActivityImplementations } from "./activity-contract.js";
import type { OrderActivityContracts } from "./order-contracts.js";

export type { OrderActivityDeps } from "./activities/deps.js";
export type OrderActivities = ActivityImplementations<OrderActivityContracts>;

/**
 * The order orchestration's activities: every read and write it needs, each a fenced update of the
 * state record through the transition table. Built from their dependencies so both hosts (and tests)
 * wire their own stores; the orchestrator only ever sees their results.
 */
export function createOrderActivities(given: OrderActivityDeps): OrderActivities {
  // An order's activities update its record one after the other: each starts from the last one's write.
  const deps: OrderActivityDeps = { ...given, states: new RecentRecords(given.states) };
  const actions = createRecordActions(deps);
  return {
    ...createAttemptActivities(deps, actions),
    ...createProgressActivities(deps, actions),
    ...createFailureActivities(deps, actions),
    ...createCompensationActivities(deps, actions),
    ...createUndoActivities(actions),
    ...createAgentActivities(deps),
  };
}
