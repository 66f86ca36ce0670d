import { describe, expect, it } from "vitest";
import { decideFault, type PartnerFaults } from "../../partner/faults.js";
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

type Fate = "none" | "transient" | "permanent";

/**
 * The partner's faults are seeded per idempotency key and call number. This finds an order id whose
 * keys meet the given fates, call by call, so the real fault mechanism tells exactly the story a test
 * needs. Keys are `${orderId}:${step}` and `${orderId}:${step}:undo`.
 */
function orderWhose(faults: PartnerFaults, fates: Record<string, readonly Fate[]>): string {
  for (let i = 0; i < 500_000; i++) {
    const id = `ord-f-${i}`;
    const fits = Object.entries(fates).every(([key, calls]) =>
      calls.every((fate, call) => decideFault(faults, 0, `${id}:${key}`, call + 1).kind === fate),
    );
    if (fits) return id;
  }
  throw new Error("no order id fits these fates");
}

const FAULTS: PartnerFaults = { transient: 0.5, permanent: 0.25, slow: 0, lostReply: 0 };

async function compensatingOrder(s: Scenario, orderId: string): Promise<void> {
  s.partner.setFaults(FAULTS);
  await post(s, orderMessage(orderId));
  await runUntil(s, async () => (await recordOf(s, orderId)).processState === "Compensating", {
    stepMs: 100,
  });
}

describe("compensation is recoverable work", () => {
  it("retries in a later attempt an undo that met transient faults beyond one attempt's calls, and ends Compensated", async () => {
    const s = await openScenario();
    const orderId = orderWhose(FAULTS, {
      reserveInventory: ["none"],
      chargePayment: ["none"],
      arrangeShipment: ["permanent"],
      "chargePayment:undo": ["transient", "transient", "transient", "none"],
      "reserveInventory:undo": ["none"],
    });
    await compensatingOrder(s, orderId);
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record).toMatchObject({ processState: "Compensated", compensationRecoveries: 1, failureCount: 0 });
    expect(record.steps.map((step) => step.status)).toEqual([
      "Compensated",
      "Compensated",
      "Failed",
      "NotStarted",
    ]);
    const ledger = s.partner.ledger();
    expect(ledger.undos).toBe(2);
    expect(ledger.callsForKey(`${orderId}:chargePayment:undo`)).toBe(4);
    expect(s.pipeline.alerts.raised).toEqual([]);
  });

  it("resumes a compensation whose attempt died, and undoes each effect once", async () => {
    const s = await openScenario();
    const orderId = orderWhose(FAULTS, {
      reserveInventory: ["none"],
      chargePayment: ["none"],
      arrangeShipment: ["permanent"],
      "chargePayment:undo": ["transient", "none"],
      "reserveInventory:undo": ["none"],
    });
    await compensatingOrder(s, orderId);
    const dying = await recordOf(s, orderId);
    await s.pipeline.runtime.terminate(dying.lockedBy ?? "", "the worker running it crashed");
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record.processState).toBe("Compensated");
    expect(record.attempt).toBeGreaterThan(dying.attempt);
    expect(s.partner.ledger().undos).toBe(2);
    expect(s.partner.ledger().duplicateEffects).toBe(0);
  });

  it("ends in CompensationFailed, alerting with the steps still applied, once compensation recoveries run out", async () => {
    // Undo refused transiently six times running would open the breaker: this story is the recovery limit.
    const s = await openScenario({ MAX_RECOVERIES: "1", BREAKER_ENABLED: "false" });
    const orderId = orderWhose(FAULTS, {
      reserveInventory: ["none"],
      chargePayment: ["none"],
      arrangeShipment: ["permanent"],
      "chargePayment:undo": ["transient", "transient", "transient", "transient", "transient", "transient"],
    });
    await compensatingOrder(s, orderId);
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record).toMatchObject({
      processState: "CompensationFailed",
      lastError: { code: "CompensationRecoveriesExhausted" },
    });
    expect(s.pipeline.alerts.raised).toEqual([
      expect.objectContaining({
        kind: "CompensationFailed",
        orderId,
        reason: expect.stringContaining("still applied: reserveInventory, chargePayment"),
      }),
    ]);
  });
});

describe("an undo the partner refuses for good", () => {
  it("ends in CompensationFailed at once, the alert naming the refusal and the steps still applied", async () => {
    const s = await openScenario({}, { undoRefusals: true });
    const orderId = orderWhose(FAULTS, {
      reserveInventory: ["none"],
      chargePayment: ["none"],
      arrangeShipment: ["permanent"],
      "chargePayment:undo": ["permanent"],
    });
    s.partner.setFaults(FAULTS);
    await post(s, orderMessage(orderId));
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record).toMatchObject({ processState: "CompensationFailed", compensationRecoveries: 0 });
    expect(record.lastError).toMatchObject({
      kind: "permanent",
      message: "refund-window-closed",
      step: "chargePayment",
    });
    expect(record.steps.map((step) => step.status)).toEqual([
      "Completed",
      "CompensationFailed",
      "Failed",
      "NotStarted",
    ]);
    expect(s.pipeline.alerts.raised).toEqual([
      expect.objectContaining({
        kind: "CompensationFailed",
        orderId,
        reason: "refund-window-closed; still applied: reserveInventory, chargePayment",
      }),
    ]);
    expect(s.partner.ledger().undos).toBe(0);
  });
});

/** Faults that include lost replies: the partner applies the effect, and the Agent never hears of it. */
const LOSSY: PartnerFaults = { transient: 0.4, permanent: 0.2, slow: 0, lostReply: 0.2 };

/**
 * An order whose recoveries (MAX_RECOVERIES=1) run out while its second step is in doubt: the first
 * call charges the card but its reply is lost, and every later call of both attempts meets a 503.
 * `after` gives the fates of the calls that follow, and of any other key.
 */
async function exhaustedWithInDoubtStep(
  env: Record<string, string>,
  { chargePayment = [], ...after }: Record<string, readonly Fate[]>,
) {
  // These stories are the Supervisor's limits: a partner failing this order's calls in a run would
  // open the circuit breaker and defer it instead (partner-outage.test.ts).
  const s = await openScenario({ MAX_RECOVERIES: "1", BREAKER_ENABLED: "false", ...env });
  const orderId = orderWhose(LOSSY, {
    ...after,
    reserveInventory: ["none"],
    chargePayment: [
      "lostReply" as Fate,
      "transient",
      "transient",
      "transient",
      "transient",
      "transient",
      ...chargePayment,
    ],
  });
  s.partner.setFaults(LOSSY);
  await post(s, orderMessage(orderId));
  return { s, orderId };
}

describe("recoveries exhausted with a completed and an in-doubt step", () => {
  it("parks the order in Error by default, the alert naming the completed and the in-doubt step", async () => {
    const { s, orderId } = await exhaustedWithInDoubtStep({}, {});
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record).toMatchObject({ processState: "Error", lastError: { code: "RecoveriesExhausted" } });
    expect(record.steps.map((step) => step.status)).toEqual([
      "Completed",
      "InDoubt",
      "NotStarted",
      "NotStarted",
    ]);
    expect(record.compensationLog.map((entry) => [entry.step, entry.reference === null])).toEqual([
      ["reserveInventory", false],
      ["chargePayment", true],
    ]);
    expect(s.pipeline.alerts.raised).toEqual([
      expect.objectContaining({
        kind: "RecoveriesExhausted",
        orderId,
        reason: expect.stringContaining("completed: reserveInventory; in doubt: chargePayment"),
      }),
    ]);
    // The in-doubt charge was in fact applied: the partner has both effects.
    expect(s.partner.ledger().effects).toBe(2);
  });

  it.each(["activity", "queue"])(
    "compensates instead with ON_RECOVERIES_EXHAUSTED=compensate: the doubt resolved, every effect undone once (Agent as %s)",
    async (agentMode) => {
      const { s, orderId } = await exhaustedWithInDoubtStep(
        { ON_RECOVERIES_EXHAUSTED: "compensate", AGENT_MODE: agentMode },
        { chargePayment: ["none"], "chargePayment:undo": ["none"], "reserveInventory:undo": ["none"] },
      );
      await runUntil(s, terminal(s, orderId));
      const record = await recordOf(s, orderId);
      expect(record).toMatchObject({
        processState: "Compensated",
        lastError: { code: "RecoveriesExhausted" },
      });
      expect(record.steps.map((step) => step.status)).toEqual([
        "Compensated",
        "Compensated",
        "NotStarted",
        "NotStarted",
      ]);
      const ledger = s.partner.ledger();
      // Re-sending the charge with its key replayed the effect already applied: still two, both undone.
      expect(ledger.effects).toBe(2);
      expect(ledger.undos).toBe(2);
      expect(ledger.duplicateEffects).toBe(0);
      expect(s.pipeline.alerts.raised).toEqual([]);
    },
  );

  it("operator resubmit resumes at the in-doubt step, which the partner applied once, and the order ends Processed", async () => {
    const { s, orderId } = await exhaustedWithInDoubtStep(
      {},
      { chargePayment: ["none"], arrangeShipment: ["none"] },
    );
    await runUntil(s, terminal(s, orderId));
    const answer = await s.pipeline.operator.resubmit(orderId, "alice", "partner fixed its payment gateway");
    expect(answer).toMatchObject({
      ok: true,
      record: {
        processState: "Pending",
        lastError: { kind: "operator", message: "resubmit by alice: partner fixed its payment gateway" },
      },
    });
    await runUntil(s, terminal(s, orderId));
    expect(await recordOf(s, orderId)).toMatchObject({ processState: "Processed" });
    const ledger = s.partner.ledger();
    expect(ledger.callsForKey(`${orderId}:chargePayment`)).toBe(7);
    expect(ledger.effects).toBe(4);
    expect(ledger.duplicateEffects).toBe(0);
  });

  it("operator compensate resolves the in-doubt step and undoes every applied effect once; the order ends Compensated", async () => {
    const { s, orderId } = await exhaustedWithInDoubtStep(
      {},
      { chargePayment: ["none"], "chargePayment:undo": ["none"], "reserveInventory:undo": ["none"] },
    );
    await runUntil(s, terminal(s, orderId));
    const answer = await s.pipeline.operator.compensate(orderId, "bob", "customer cancelled");
    expect(answer).toMatchObject({ ok: true, record: { processState: "Compensating", lockedBy: null } });
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record.processState).toBe("Compensated");
    expect(record.steps.map((step) => step.status)).toEqual([
      "Compensated",
      "Compensated",
      "NotStarted",
      "NotStarted",
    ]);
    const ledger = s.partner.ledger();
    expect(ledger.effects).toBe(2);
    expect(ledger.undos).toBe(2);
    expect(ledger.duplicateEffects).toBe(0);
  });

  it("operator compensate of a step in doubt that the partner never applied undoes nothing of it", async () => {
    // Every call of the second step met a 503: the doubt resolves to "applied now", then undone. Six in a
    // row would open the circuit breaker; this story is the recovery limit, so it is off.
    const s = await openScenario({ MAX_RECOVERIES: "1", BREAKER_ENABLED: "false" });
    const orderId = orderWhose(FAULTS, {
      reserveInventory: ["none"],
      chargePayment: [
        "transient",
        "transient",
        "transient",
        "transient",
        "transient",
        "transient",
        "permanent",
      ],
      "reserveInventory:undo": ["none"],
    });
    s.partner.setFaults(FAULTS);
    await post(s, orderMessage(orderId));
    await runUntil(s, terminal(s, orderId));
    expect((await recordOf(s, orderId)).steps[1]?.status).toBe("InDoubt");
    await s.pipeline.operator.compensate(orderId, "bob", "customer cancelled");
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record.processState).toBe("Compensated");
    // The charge, re-sent with its key, was refused: nothing applied, so it left the log and needs no undo.
    expect(record.steps.map((step) => step.status)).toEqual([
      "Compensated",
      "NotStarted",
      "NotStarted",
      "NotStarted",
    ]);
    expect(record.compensationLog.map((entry) => entry.step)).toEqual(["reserveInventory"]);
    expect(s.partner.ledger()).toMatchObject({ effects: 1, undos: 1 });
  });
});

describe("operator commands", () => {
  it("refuses each command where it does not apply, saying why, and refuses an empty operator or reason", async () => {
    const s = await openScenario();
    await post(s, orderMessage("ord-fine"));
    await runUntil(s, terminal(s, "ord-fine"));
    const resubmit = await s.pipeline.operator.resubmit("ord-fine", "alice", "just because");
    expect(resubmit).toEqual({
      ok: false,
      reason: "refused",
      message: expect.stringContaining("may not resubmit order ord-fine in Processed"),
    });
    const compensate = await s.pipeline.operator.compensate("ord-fine", "alice", "just because");
    expect(compensate).toMatchObject({ ok: false, reason: "refused" });
    expect(await s.pipeline.operator.resubmit("ord-missing", "alice", "x")).toMatchObject({
      ok: false,
      reason: "notFound",
    });
    expect(await s.pipeline.operator.resubmit("ord-fine", " ", "x")).toMatchObject({
      ok: false,
      reason: "invalid",
    });
    expect(await s.pipeline.operator.compensate("ord-fine", "alice", "")).toMatchObject({
      ok: false,
      reason: "invalid",
    });
    expect((await recordOf(s, "ord-fine")).processState).toBe("Processed");
  });
});
