import { describe, expect, it } from "vitest";
import { decideFault, type PartnerFaults } from "../../src/local/partner/faults.js";
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
    expect(record.steps.map((step) => step.status)).toEqual(["Compensated", "Compensated", "Failed"]);
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
    const s = await openScenario({ MAX_RECOVERIES: "1" });
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

describe("operator commands", () => {
  /** An order in Error after its recoveries ran out, with its first step applied. */
  async function erroredWithAppliedStep({ chargePayment = [], ...extra }: Record<string, readonly Fate[]>) {
    const s = await openScenario({ MAX_RECOVERIES: "1" });
    // Two attempts of three calls each meet transient faults: the recoveries run out.
    const twoAttempts = Array.from({ length: 6 }, (): Fate => "transient");
    const orderId = orderWhose(FAULTS, {
      ...extra,
      reserveInventory: ["none"],
      chargePayment: [...twoAttempts, ...chargePayment],
    });
    s.partner.setFaults(FAULTS);
    await post(s, orderMessage(orderId));
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record).toMatchObject({ processState: "Error", lastError: { code: "RecoveriesExhausted" } });
    expect(record.steps[0]?.status).toBe("Completed");
    return { s, orderId };
  }

  it("resubmit resumes an Error order at the first step not completed, and it ends Processed", async () => {
    const { s, orderId } = await erroredWithAppliedStep({
      chargePayment: ["none"],
      arrangeShipment: ["none"],
    });
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
    expect(ledger.effects).toBe(3);
    expect(ledger.duplicateEffects).toBe(0);
  });

  it("compensate undoes every applied step of an Error order once, and it ends Compensated", async () => {
    const { s, orderId } = await erroredWithAppliedStep({ "reserveInventory:undo": ["none"] });
    const answer = await s.pipeline.operator.compensate(orderId, "bob", "customer cancelled");
    expect(answer).toMatchObject({ ok: true, record: { processState: "Compensating", lockedBy: null } });
    await runUntil(s, terminal(s, orderId));
    const record = await recordOf(s, orderId);
    expect(record.processState).toBe("Compensated");
    expect(record.steps[0]?.status).toBe("Compensated");
    expect(s.partner.ledger().undos).toBe(1);
  });

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
