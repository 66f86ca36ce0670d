import { describe, expect, it } from "vitest";
import { decideFault } from "../../partner/faults.js";
import {
  orderMessage,
  post,
  recordOf,
  runUntil,
  type Scenario,
  scenarioPerTest,
  terminal,
} from "./pipeline-harness.js";

const openScenario = scenarioPerTest();

const open = (env: Record<string, string> = {}): Promise<Scenario> => openScenario(env);

describe("the happy path", () => {
  it("processes an order through all four steps of the current workflow version, each effect applied once", async () => {
    const s = await open();
    await post(s, orderMessage("ord-happy"));
    await runUntil(s, terminal(s, "ord-happy"));
    const record = await recordOf(s, "ord-happy");
    expect(record).toMatchObject({ processState: "Processed", attempt: 1, failureCount: 0, lockedBy: null });
    expect(record.steps.map((step) => step.status)).toEqual([
      "Completed",
      "Completed",
      "Completed",
      "Completed",
    ]);
    const ledger = s.partner.ledger();
    expect(ledger.effects).toBe(4);
    expect(ledger.duplicateEffects).toBe(0);
    const statuses = await s.pipeline.queue("status-test").peek(10);
    expect(statuses.map((m) => (m.body as { status: string }).status)).toEqual([
      "received",
      "processing",
      "completed",
    ]);
  });
});

describe("faults the pattern names", () => {
  it("retries a transient partner fault inside the deadline, with the same idempotency key", async () => {
    const s = await open();
    s.partner.setFaults({ transient: 1 });
    await post(s, orderMessage("ord-transient"));
    await runUntil(s, () => s.partner.ledger().calls >= 1, { stepMs: 10 });
    s.partner.setFaults({});
    await runUntil(s, terminal(s, "ord-transient"), { stepMs: 100 });
    const record = await recordOf(s, "ord-transient");
    expect(record).toMatchObject({ processState: "Processed", attempt: 1, failureCount: 0 });
    const ledger = s.partner.ledger();
    expect(ledger.callsForKey("ord-transient:reserveInventory")).toBeGreaterThanOrEqual(2);
    expect(ledger.effects).toBe(4);
    expect(ledger.duplicateEffects).toBe(0);
  });

  it("leaves an attempt whose partner stays down past the deadline to the Supervisor, which starts a new one", async () => {
    const s = await open();
    s.partner.setFaults({ transient: 1 });
    await post(s, orderMessage("ord-down"));
    await runUntil(s, async () => (await recordOf(s, "ord-down")).failureCount === 1);
    const recovered = await recordOf(s, "ord-down");
    expect(recovered).toMatchObject({
      processState: "Pending",
      lockedBy: null,
      lastError: { code: "AttemptExpired" },
    });
    // Its Agent called the partner: the step may have applied its effect, so it is in doubt, not reset.
    expect(recovered.steps[0]?.status).toBe("InDoubt");
    expect(s.partner.ledger().callsForKey("ord-down:reserveInventory")).toBe(3); // the whole allowance, no more
    s.partner.setFaults({});
    await runUntil(s, terminal(s, "ord-down"));
    expect(await recordOf(s, "ord-down")).toMatchObject({
      processState: "Processed",
      attempt: 2,
      failureCount: 1,
    });
    expect(s.partner.ledger().effects).toBe(4);
  });

  it("ignores a reply that arrives after the timer won, and the retry is deduplicated by the partner", async () => {
    // The partner answers after 60 s; the Agent waits up to 30 s per call; the step's deadline is 10 s.
    const s = await open({ PARTNER_CALL_TIMEOUT_MS: "30000" });
    s.partner.setFaults({ slow: 1 });
    await post(s, orderMessage("ord-slow"));
    await runUntil(
      s,
      async () => (await s.pipeline.runtime.getStatus("ord-slow:1"))?.runtimeStatus === "Completed",
      {
        stepMs: 1_000,
      },
    );
    s.partner.setFaults({});
    await runUntil(s, terminal(s, "ord-slow"), { stepMs: 1_000 });
    const record = await recordOf(s, "ord-slow");
    expect(record.processState).toBe("Processed");
    expect(record.attempt).toBeGreaterThanOrEqual(2);
    const ledger = s.partner.ledger();
    expect(ledger.effectsForKey("ord-slow:reserveInventory")).toBe(1);
    expect(ledger.duplicateEffects).toBe(0);
    // The first attempt's late answer reached no one: its instance had finished when the timer won.
    const first = await s.pipeline.runtime.getStatus("ord-slow:1");
    expect(first?.output).toMatchObject({ outcome: "timedOut", step: "reserveInventory" });
    // The Agent's call of attempt 1 gives up at its 30 s timeout; its answer then finds no one waiting.
    await runUntil(s, () => s.logger.events("durable.activity.result.dropped").length > 0, { stepMs: 1_000 });
    expect(await recordOf(s, "ord-slow")).toMatchObject({ processState: "Processed" });
  });

  it("treats a duplicated reply as harmless", async () => {
    const s = await open();
    await post(s, orderMessage("ord-dup"));
    await runUntil(s, async () => (await recordOf(s, "ord-dup")).steps[0]?.status === "Completed", {
      stepMs: 10,
    });
    const reply = {
      schemaVersion: 1,
      requestId: "ord-dup:1:reserveInventory",
      orderId: "ord-dup",
      attempt: 1,
      step: "reserveInventory",
      operation: "do",
      instanceId: "ord-dup:1",
      outcome: "succeeded",
      reference: "res-999999",
      fault: null,
      callsMade: 1,
      completedAt: "2026-05-01T09:00:00.000Z",
    };
    await s.pipeline.runtime.raiseEvent("ord-dup:1", "reply:reserveInventory:do", reply);
    await runUntil(s, terminal(s, "ord-dup"));
    const record = await recordOf(s, "ord-dup");
    expect(record.processState).toBe("Processed");
    expect(record.compensationLog.map((e) => e.step)).toEqual([
      "reserveInventory",
      "chargePayment",
      "arrangeShipment",
      "notifyCustomer",
    ]);
    expect(record.compensationLog[0]?.reference).not.toBe("res-999999");
  });

  it("recovers an answer lost after the effect: the retry is a replay, not a second effect", async () => {
    const s = await open();
    s.partner.setFaults({ lostReply: 1 });
    await post(s, orderMessage("ord-lost"));
    await runUntil(s, () => s.partner.ledger().calls >= 1, { stepMs: 10 });
    s.partner.setFaults({});
    await runUntil(s, terminal(s, "ord-lost"), { stepMs: 100 });
    expect((await recordOf(s, "ord-lost")).processState).toBe("Processed");
    const ledger = s.partner.ledger();
    expect(ledger.callsForKey("ord-lost:reserveInventory")).toBeGreaterThanOrEqual(2);
    expect(ledger.effectsForKey("ord-lost:reserveInventory")).toBe(1);
    expect(ledger.duplicateEffects).toBe(0);
  });

  it("sends an order to Error with an alert on a permanent fault before any step completed", async () => {
    const s = await open();
    s.partner.setFaults({ permanent: 1 });
    await post(s, orderMessage("ord-declined"));
    await runUntil(s, terminal(s, "ord-declined"));
    const record = await recordOf(s, "ord-declined");
    expect(record).toMatchObject({
      processState: "Error",
      lockedBy: null,
      lastError: { kind: "permanent", step: "reserveInventory" },
    });
    expect(s.pipeline.alerts.raised).toEqual([
      expect.objectContaining({
        kind: "OrderFailed",
        orderId: "ord-declined",
        reason: "Http422: out-of-stock; completed: none; in doubt: none",
      }),
    ]);
    expect(s.partner.ledger().effects).toBe(0);
  });

  it("undoes completed steps in reverse order when a later step fails permanently", async () => {
    // The partner's fault decisions are seeded per key: pick an order whose first two steps pass and
    // whose shipment is rejected, so the real fault mechanism produces exactly that story.
    const faults = { transient: 0, permanent: 0.5, slow: 0, lostReply: 0 };
    const fate = (id: string, step: string) => decideFault(faults, 0, `${id}:${step}`, 1).kind;
    const orderId =
      Array.from({ length: 500 }, (_, i) => `ord-undo-${i}`).find(
        (id) =>
          fate(id, "reserveInventory") === "none" &&
          fate(id, "chargePayment") === "none" &&
          fate(id, "arrangeShipment") === "permanent",
      ) ?? "";
    const s = await open();
    s.partner.setFaults(faults);
    await post(s, orderMessage(orderId));
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record.processState).toBe("Compensated");
    expect(record.steps.map((step) => step.status)).toEqual([
      "Compensated",
      "Compensated",
      "Failed",
      "NotStarted",
    ]);
    const ledger = s.partner.ledger();
    expect(ledger.undos).toBe(2);
    const undone = s.logger.events("compensation.step").map((line) => line.step);
    expect(undone).toEqual(["chargePayment", "reserveInventory"]);
    const statuses = await s.pipeline.queue("status-test").peek(10);
    expect(statuses.map((m) => (m.body as { status: string }).status).slice(-2)).toEqual([
      "compensating",
      "compensated",
    ]);
  });

  it("sends the order to Error with an alert once failures pass the limit", async () => {
    // With the breaker, a partner that refuses everything defers the order instead (partner-outage.test.ts).
    const s = await open({ MAX_RECOVERIES: "1", BREAKER_ENABLED: "false" });
    s.partner.setFaults({ transient: 1 });
    await post(s, orderMessage("ord-exhausted"));
    await runUntil(s, terminal(s, "ord-exhausted"));
    const record = await recordOf(s, "ord-exhausted");
    expect(record).toMatchObject({
      processState: "Error",
      failureCount: 2,
      lastError: { code: "RecoveriesExhausted" },
    });
    expect(s.pipeline.alerts.raised.map((a) => a.kind)).toEqual(["RecoveriesExhausted"]);
    expect(s.partner.ledger().callsForKey("ord-exhausted:reserveInventory")).toBe(6); // 2 attempts x 3 calls
  });
});
