import { describe, expect, it } from "vitest";
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
