import { describe, expect, it } from "vitest";
import { LocalDurableRuntime } from "../../laptop/durable/local-durable-runtime.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteOrdersRepository } from "../../laptop/sqlite/sqlite-orders-repository.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { captureRegistrations, type FunctionRegistry } from "../../laptop/worker/registration-capture.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { LoggingAlertSink } from "../../src/adapters/logging/logging-alert-sink.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { registerOrderProcessing } from "../../src/functions/register-order-processing.js";
import { createOrderActivities } from "../../src/orchestrators/order-activities.js";
import { ORDER_ACTIVITIES, ORDER_PROCESSING } from "../../src/orchestrators/order-contracts.js";

/** The order activities and orchestration as both hosts register them, on in-memory stores. */
async function registered() {
  const db = openDatabase(":memory:");
  const clock = new VirtualClock("2026-01-01T00:00:00.000Z");
  const logger = new MemoryLogger();
  const activities = createOrderActivities({
    states: new SqliteStateStore(db),
    orders: new SqliteOrdersRepository(db, clock),
    notifier: { notify: async () => undefined },
    alerts: new LoggingAlertSink(logger),
    clock,
    logger,
    agent: async () => {
      throw new Error("not called");
    },
    sendAgentRequest: async () => undefined,
    onOrderSettled: async () => undefined,
    settings: {
      stepTimeoutMs: 1_000,
      agentCallsPerStep: 3,
      agentAmplification: 1,
      agentMode: "activity",
      maxDeferralMs: 600_000,
    },
  });
  let runtime: LocalDurableRuntime | undefined;
  const registry = await captureRegistrations(() =>
    registerOrderProcessing(activities, () => runtime as LocalDurableRuntime),
  );
  runtime = LocalDurableRuntime.open({ db, clock, registry, logger });
  return { db, registry, runtime };
}

function call(registry: FunctionRegistry, name: string, input: unknown): Promise<unknown> {
  const fn = registry.get(name);
  if (!fn) throw new Error(`${name} is not registered`);
  return Promise.resolve(
    fn.handler(input, { invocationId: "i-1", functionName: name, extraInputs: new Map() }),
  );
}

describe("the activity boundary", () => {
  it("refuses a malformed activity input with an error naming each field, before the activity runs", async () => {
    const { registry, runtime, db } = await registered();
    const error = await call(registry, ORDER_ACTIVITIES.advance.name, {
      orderId: "ord-1",
      step: "chargePayment",
      next: { step: "arrangeShipment", completeBy: "tomorrow" },
      colour: "blue",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain("invalid input of activity orderAdvance");
    expect(message).toContain("instanceId: is required");
    expect(message).toContain("next.completeBy: must be an ISO-8601 UTC instant");
    expect(message).toContain("colour: is not a field of this message");
    await runtime.close();
    db.close();
  });

  it("refuses an instant of the right form that does not exist, before the activity writes it", async () => {
    const { registry, runtime, db } = await registered();
    const error = await call(registry, ORDER_ACTIVITIES.advance.name, {
      orderId: "ord-1",
      instanceId: "ord-1:1",
      step: "reserveInventory",
      next: { step: "chargePayment", completeBy: "2026-02-30T00:00:00.000Z" },
    }).catch((e: unknown) => e);
    expect((error as Error).message).toContain("next.completeBy: must be an ISO-8601 UTC instant");
    await runtime.close();
    db.close();
  });

  it("hands a well-formed input to the implementation", async () => {
    const { registry, runtime, db } = await registered();
    const plan = await call(registry, ORDER_ACTIVITIES.beginAttempt.name, {
      orderId: "ord-unknown",
      instanceId: "ord-unknown:1",
      firstDeadlineFrom: "2026-01-01T00:00:00.000Z",
    });
    expect(plan).toEqual({ owned: false });
    await runtime.close();
    db.close();
  });

  it("fails an orchestration started with a malformed input, naming the field", async () => {
    const { runtime, db } = await registered();
    await runtime.startNew(ORDER_PROCESSING, { instanceId: "ord-1:1", input: { orderId: "ord-1" } });
    await runtime.idle();
    const status = await runtime.getStatus("ord-1:1");
    expect(status?.runtimeStatus).toBe("Failed");
    expect(status?.failure).toContain("invalid orchestration input: attempt: is required");
    await runtime.close();
    db.close();
  });
});
