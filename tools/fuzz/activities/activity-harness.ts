import { VirtualClock } from "../../../laptop/simulation/virtual-clock.js";
import { SqliteOrdersRepository } from "../../../laptop/sqlite/sqlite-orders-repository.js";
import { SqliteStateStore } from "../../../laptop/sqlite/sqlite-state-store.js";
import { captureRegistrations } from "../../../laptop/worker/registration-capture.js";
import { LoggingAlertSink } from "../../../src/adapters/logging/logging-alert-sink.js";
import { type EmbeddedDatabase, openDatabase } from "../../../src/adapters/sqlite/database.js";
import type { AgentRequest } from "../../../src/domain/agent-messages.js";
import { newPendingRecord } from "../../../src/domain/state-record.js";
import { toInstant } from "../../../src/domain/time.js";
import { registerOrderProcessing } from "../../../src/functions/register-order-processing.js";
import {
  createOrderActivities,
  type OrderActivityDeps,
} from "../../../src/orchestrators/order-activities.js";
import { updateAsRead } from "../../../src/state/record-updates.js";
import { CapturedLog } from "../captured-log.js";
import { refusingDurableClient } from "../fuzz-pipeline.js";
import { WriteLog } from "../write-log.js";
import type { AttemptRef } from "./valid-inputs.js";

/** An activity as its host calls it: the input as it came out of the durable store. */
export type ActivityHandler = (input: unknown) => Promise<unknown>;

/**
 * Builds the activities' handlers by name from their dependencies: by default as both hosts do,
 * `createOrderActivities` registered through `registerOrderProcessing`, every input validated against
 * its contract before the implementation sees it. A test may plant other handlers.
 */
export type HandlerSource = (deps: OrderActivityDeps) => Promise<ReadonlyMap<string, ActivityHandler>>;

export const registeredHandlers: HandlerSource = async (deps) => {
  const durable = refusingDurableClient("no durable client is used here");
  const registry = await captureRegistrations(() =>
    registerOrderProcessing(createOrderActivities(deps), () => durable),
  );
  const handlers = new Map<string, ActivityHandler>();
  for (const fn of registry.withTrigger("activityTrigger")) {
    handlers.set(fn.name, async (input) =>
      fn.handler(input, { invocationId: "fuzz", functionName: fn.name, extraInputs: new Map() }),
    );
  }
  return handlers;
};

/** What the activities did besides writing records: Agent calls, requests sent, starter nudges. */
export interface SideEffects {
  agentCalls: number;
  requestsSent: number;
  settled: number;
}

/** The order activities on an in-memory store, with every side effect counted. */
export class ActivityHarness {
  readonly log = new CapturedLog();
  readonly effects: SideEffects = { agentCalls: 0, requestsSent: 0, settled: 0 };
  private readonly clock = new VirtualClock(new Date("2026-01-01T00:00:00.000Z"));
  private readonly db: EmbeddedDatabase = openDatabase(":memory:");
  readonly states = new SqliteStateStore(this.db);
  readonly orders = new SqliteOrdersRepository(this.db, this.clock);
  readonly writes = new WriteLog(this.db);
  handlers: ReadonlyMap<string, ActivityHandler> = new Map();

  static async open(source: HandlerSource = registeredHandlers): Promise<ActivityHarness> {
    const harness = new ActivityHarness();
    harness.handlers = await source(harness.deps());
    return harness;
  }

  private deps(): OrderActivityDeps {
    const { effects } = this;
    return {
      states: this.states,
      orders: this.orders,
      notifier: { notify: async () => undefined },
      alerts: new LoggingAlertSink(this.log.logger),
      clock: this.clock,
      logger: this.log.logger,
      agent: async (request: AgentRequest) => {
        effects.agentCalls++;
        throw new Error(`no partner here (${request.requestId})`);
      },
      sendAgentRequest: async () => {
        effects.requestsSent++;
      },
      onOrderSettled: async () => {
        effects.settled++;
      },
      settings: {
        stepTimeoutMs: 30_000,
        agentCallsPerStep: 3,
        agentAmplification: 1,
        agentMode: "queue",
        maxDeferralMs: 600_000,
      },
    };
  }

  /** A record claimed by its first attempt, whose first step that attempt has started. */
  async ownedOrder(orderId: string): Promise<AttemptRef> {
    const now = toInstant(this.clock.now());
    const order = {
      orderId,
      customerId: "fuzz",
      currency: "EUR",
      items: [{ sku: "S-1", quantity: 1, unitPriceMinor: 100 }],
    };
    await this.orders.insertIfAbsent(order);
    const created = await this.states.createIfAbsent(
      newPendingRecord({ order, replyTo: null, now, retryBudgetLimit: 400, undoReserve: 40 }),
    );
    const stored = created.created ? created.record : created.existing;
    const claim = await updateAsRead(this.states, stored, "starter", {
      type: "claim",
      now,
      attemptTimeoutMs: 120_000,
    });
    if (!claim.ok) throw new Error(`could not claim ${orderId}: ${claim.reason}`);
    const ref = { orderId, instanceId: claim.record.lockedBy ?? "", attempt: claim.record.attempt };
    await this.handlers.get("orderBeginAttempt")?.({
      orderId,
      instanceId: ref.instanceId,
      firstDeadlineFrom: now,
    });
    return ref;
  }

  close(): void {
    this.db.close();
  }
}
