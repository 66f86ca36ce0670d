import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteOrdersRepository } from "../../laptop/sqlite/sqlite-orders-repository.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { LoggingAlertSink } from "../../src/adapters/logging/logging-alert-sink.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import type { AgentRequest, AgentResponse } from "../../src/domain/agent-messages.js";
import { applyTransition } from "../../src/domain/apply-transition.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { type ActivityInvocation, bindActivities } from "../../src/orchestrators/activity-contract.js";
import { createOrderActivities } from "../../src/orchestrators/order-activities.js";
import { ORDER_ACTIVITIES, type StartedAttempt } from "../../src/orchestrators/order-contracts.js";
import { pendingRecord, T0 } from "../support/records.js";

export const STEP_TIMEOUT_MS = 5_000;
export const INSTANCE = "ord-1:1";

export type ActivityCall = <T>(name: string, input: unknown) => Promise<T>;

/**
 * The order activities on SQLite in memory, an Agent that answers as told, and order `ord-1` claimed
 * for attempt 1 under the given workflow version. `replaceTakesMs` makes the store's nth replace
 * (from 1) take that long on the virtual clock.
 */
export async function setUpOrderActivities(
  answer: (request: AgentRequest) => AgentResponse | Promise<AgentResponse>,
  workflowVersion = 3,
  replaceTakesMs: (nth: number) => number = () => 0,
) {
  const db = openDatabase(":memory:");
  const clock = new VirtualClock(T0);
  let replaces = 0;
  const states = new (class extends SqliteStateStore {
    override async replace(...args: Parameters<SqliteStateStore["replace"]>) {
      const result = await super.replace(...args);
      await clock.advance(replaceTakesMs(++replaces));
      return result;
    }
  })(db);
  const asked: AgentRequest[] = [];
  const settled: string[] = [];
  const activities = createOrderActivities({
    states,
    orders: new SqliteOrdersRepository(db, clock),
    notifier: { notify: async () => undefined },
    alerts: new LoggingAlertSink(new MemoryLogger()),
    clock,
    logger: new MemoryLogger(),
    agent: async (request) => {
      asked.push(request);
      return answer(request);
    },
    sendAgentRequest: async () => undefined,
    onOrderSettled: async () => {
      settled.push("settled");
    },
    settings: {
      stepTimeoutMs: STEP_TIMEOUT_MS,
      agentCallsPerStep: 3,
      agentAmplification: 1,
      agentMode: "activity",
      maxDeferralMs: 600_000,
    },
  });
  const pending = pendingRecord("ord-1", { workflowVersion });
  const claimed = applyTransition(pending, "starter", { type: "claim", now: T0, attemptTimeoutMs: 60_000 });
  if (!claimed.ok) throw new Error(claimed.error.message);
  await states.createIfAbsent(claimed.value.record);
  const handlers = new Map(bindActivities(ORDER_ACTIVITIES, activities).map((a) => [a.name, a.handler]));
  const invocation: ActivityInvocation = { durableClient: () => ({}) as never };
  const call: ActivityCall = async <T>(name: string, input: unknown) => {
    const handler = handlers.get(name);
    if (!handler) throw new Error(`${name} is not registered`);
    return (await handler(input, invocation)) as T;
  };
  return { db, clock, states, asked, settled, call };
}

/** `orderStartAttempt` for attempt 1 of the given version, its first step due one step timeout after T0. */
export function startAttempt(
  call: ActivityCall,
  options: { readonly workflowVersion?: number; readonly chainSteps?: true } = {},
): Promise<StartedAttempt> {
  return call<StartedAttempt>(ORDER_ACTIVITIES.startAttempt.name, {
    orderId: "ord-1",
    instanceId: INSTANCE,
    attempt: 1,
    workflowVersion: options.workflowVersion ?? 3,
    firstCompleteBy: addMilliseconds(T0, STEP_TIMEOUT_MS),
    ...(options.chainSteps ? { chainSteps: true } : {}),
  });
}

/** The partner's success for the request, its reference named after the step. */
export const succeeded = (request: AgentRequest): AgentResponse => ({
  schemaVersion: 2,
  requestId: request.requestId,
  orderId: request.orderId,
  attempt: request.attempt,
  step: request.step,
  operation: request.operation,
  instanceId: request.instanceId,
  outcome: "succeeded",
  reference: `ref-${request.step}`,
  fault: null,
  callsMade: 1,
  completedAt: T0,
});
