import { describe, expect, it } from "vitest";
import { runDemo } from "../../src/local/demo.js";

describe("sas demo", () => {
  it.each(["activity", "queue"] as const)(
    "settles a faulty batch with the invariants intact (Agent as %s)",
    async (agent) => {
      const summary = await runDemo({
        orders: 40,
        faults: { transient: 0.2, permanent: 0.05, slow: 0, lostReply: 0.1 },
        duplicateReplies: 0.1,
        seed: 11,
        agent,
        data: ":memory:",
        timeoutMs: 60_000,
        env: {},
      });
      expect(summary.invariants).toEqual({ ok: true, violations: [] });
      const { orders } = summary;
      expect(orders.Pending + orders.Processing + orders.Compensating).toBe(0);
      expect(
        orders.Processed +
          orders.Error +
          orders.Compensated +
          orders.CompensationFailed +
          orders.deadLettered,
      ).toBe(40);
      expect(summary.partner.duplicateEffects).toBe(0);
      expect(summary.partner.calls).toBeGreaterThan(summary.partner.effects); // the faults did bite
    },
    60_000,
  );
});
