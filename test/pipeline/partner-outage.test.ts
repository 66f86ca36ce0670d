import { describe, expect, it } from "vitest";
import { retriedStepOf } from "../../src/domain/status-message.js";
import {
  orderMessage,
  post,
  recordOf,
  runUntil,
  scenarioPerTest,
  settle,
  terminal,
} from "./pipeline-harness.js";

const openScenario = scenarioPerTest();

const OUTAGE_SECONDS = 300;
const ORDERS = 12;

describe("a partner that is down costs the orders nothing", () => {
  it.each(["activity", "queue"])(
    `%s Agents: a ${OUTAGE_SECONDS} s outage opens the breakers; orders wait uncharged and all finish within 2 minutes of its end`,
    { timeout: 120_000 },
    async (agentMode) => {
      const s = await openScenario({ AGENT_MODE: agentMode, MAX_RECOVERIES: "3" });
      const ids = Array.from({ length: ORDERS }, (_, i) => `ord-out-${i}`);
      await s.partner.startOutage(OUTAGE_SECONDS);
      const outageStart = s.clock.now().getTime();
      for (const id of ids) await post(s, orderMessage(id));
      const outageEnd = outageStart + OUTAGE_SECONDS * 1_000;
      await runUntil(s, () => s.clock.now().getTime() >= outageEnd, {
        stepMs: 1_000,
        maxMs: OUTAGE_SECONDS * 1_000 + 1_000,
      });
      await settle(s);
      const during = s.partner.ledger();
      for (const id of ids) {
        const record = await recordOf(s, id);
        expect(record.processState).toBe("Pending");
        expect(record.failureCount).toBe(0);
      }
      // Without the breaker every order would call on each attempt, retry inside it, and be recovered
      // past MAX_RECOVERIES: here the partner sees the opening run and a probe now and then.
      expect(during.outageRefusals).toBeLessThanOrEqual(30);
      const alerts = s.logger.lines.filter((l) => l.event === "alert" || l.event === "operator.alert");
      expect(JSON.stringify(alerts)).toContain("BreakerOpened");

      await runUntil(s, terminal(s, ...ids), { stepMs: 1_000, maxMs: 120_000 });
      for (const id of ids) {
        const record = await recordOf(s, id);
        expect(record).toMatchObject({ processState: "Processed", failureCount: 0 });
        expect(record.retryBudget.granted).toBeLessThan(record.retryBudget.limit / 2);
      }
      expect(s.partner.ledger().duplicateEffects).toBe(0);
      expect(JSON.stringify(s.logger.lines.filter((l) => String(l.event).includes("alert")))).toContain(
        "BreakerClosed",
      );
    },
  );
});

describe("F24-4: an outage longer than the longest deferral", () => {
  it("parks the order in Error with PartnerUnavailable and one alert; the submitter hears each change of state once; a resubmit finishes it", {
    timeout: 120_000,
  }, async () => {
    const s = await openScenario({ MAX_DEFERRAL_MS: "60000", BREAKER_MAX_OPEN_MS: "20000" });
    const orderId = "ord-long-outage";
    await s.partner.startOutage(900);
    await post(s, orderMessage(orderId));
    // The breaker opens, the order waits for its probes, each failed probe holding the breaker open.
    await runUntil(s, terminal(s, orderId), { stepMs: 1_000, maxMs: 240_000 });

    const parked = await recordOf(s, orderId);
    expect(parked).toMatchObject({
      processState: "Error",
      lastError: { kind: "stalled", code: "PartnerUnavailable" },
    });
    // Only the attempts whose calls made the run that opened the breaker were charged (a run of
    // BREAKER_FAILURE_RUN, 9, at AGENT_CALLS_PER_STEP 3 calls an attempt: three attempts); the deferrals
    // were not, and a lone order is not parked for recoveries exhausted (MAX_RECOVERIES is 3 here).
    expect(parked.failureCount).toBeLessThanOrEqual(3);
    expect(parked.deferredSince).not.toBeNull();
    // Parked at the first deferral whose next probe was past the longest deferral, not later.
    const waited = Date.parse(parked.updatedAt) - Date.parse(parked.deferredSince ?? "");
    expect(waited).toBeLessThanOrEqual(60_000);
    expect(parked.attempt).toBeGreaterThan(2);
    const alerts = s.pipeline.alerts.raised.filter((a) => a.orderId === orderId);
    expect(alerts.map((a) => a.kind)).toEqual(["PartnerUnavailable"]);
    expect(alerts[0]?.reason).toMatch(/^PartnerUnavailable: .*longest deferral/);
    const messages = async () =>
      (await s.pipeline.queue("status-test").peek(50)).map(
        (m) => m.body as { status: string; attempt: number; detail: string | null },
      );
    const statuses = async () => (await messages()).map((m) => m.status);
    // One status per change the submitter can see: "processing" once, again only after an attempt that
    // failed (saying which step), never per deferral: not one per attempt.
    const told = await messages();
    expect(told.map((m) => m.status)).toEqual([
      "received",
      ...new Array<string>(1 + parked.failureCount).fill("processing"),
      "failed",
    ]);
    for (const retry of told.filter((m) => m.status === "processing").slice(1)) {
      expect(retriedStepOf(retry.detail)).toBe("reserveInventory");
    }
    expect(parked.attempt).toBeGreaterThan(1 + parked.failureCount);

    // The partner is back: the operator resubmits, and the order runs from where it stopped.
    await s.partner.endOutage();
    await s.clock.advance(30_000);
    const answer = await s.pipeline.operator.resubmit(orderId, "alice", "the partner is back");
    expect(answer).toMatchObject({ ok: true });
    await runUntil(s, terminal(s, orderId), { stepMs: 1_000, maxMs: 120_000 });
    expect(await recordOf(s, orderId)).toMatchObject({ processState: "Processed", deferredSince: null });
    expect((await statuses()).slice(told.length)).toEqual(["processing", "completed"]);
    expect(s.partner.ledger().duplicateEffects).toBe(0);
  });
});
