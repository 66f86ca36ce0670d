import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  amplificationBelowScheduler,
  checkRetryLayers,
  grantAllowance,
  RetryAmplificationError,
  type RetryLayers,
  remainingCalls,
  worstCasePartnerCalls,
} from "../../src/domain/retry-budget.js";

const layers: RetryLayers = {
  partnerSteps: 3,
  attemptsPerOrder: 4,
  runtimeAttempts: 1,
  deliveriesPerRequest: 1,
  agentCallsPerRun: 3,
  clientCallsPerCall: 1,
};

describe("retry layers against the end-to-end budget", () => {
  it("multiplies every layer's retries", () => {
    expect(worstCasePartnerCalls(layers)).toBe(36);
    expect(amplificationBelowScheduler({ ...layers, deliveriesPerRequest: 5, clientCallsPerCall: 2 })).toBe(
      10,
    );
  });

  it("accepts layers that fit and names every factor when they do not", () => {
    expect(checkRetryLayers(layers, 36)).toEqual({ ok: true, value: 36 });
    const amplified = checkRetryLayers({ ...layers, deliveriesPerRequest: 10 }, 36);
    expect(amplified.ok).toBe(false);
    if (!amplified.ok) {
      expect(amplified.error).toBeInstanceOf(RetryAmplificationError);
      expect(amplified.error.worstCase).toBe(360);
      expect(amplified.error.message).toContain("deliveriesPerRequest=10");
      expect(amplified.error.message).toContain("budget is 36");
    }
    expect(() => checkRetryLayers({ ...layers, runtimeAttempts: 0 }, 36)).toThrow(/runtimeAttempts/);
  });
});

describe("granting allowances", () => {
  it("grants what is asked while the budget lasts, charging the worst case below the Scheduler", () => {
    const first = grantAllowance({ limit: 10, granted: 0, undoReserve: 0 }, 3, 2);
    expect(first).toEqual({ granted: 3, budget: { limit: 10, granted: 6, undoReserve: 0 } });
    const second = grantAllowance(first.budget, 3, 2);
    expect(second).toEqual({ granted: 2, budget: { limit: 10, granted: 10, undoReserve: 0 } });
    expect(grantAllowance(second.budget, 1, 1).granted).toBe(0);
  });

  it("never lets the calls an order can cost pass its limit, whatever is requested", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 1, max: 20 }), { maxLength: 50 }),
        (limit, amplification, requests) => {
          let budget = { limit, granted: 0, undoReserve: Math.floor(limit / 3) };
          let worstCaseCalls = 0;
          for (const [i, requested] of requests.entries()) {
            const grant = grantAllowance(budget, requested, amplification, i % 2 ? "undo" : "forward");
            expect(grant.granted).toBeLessThanOrEqual(requested);
            worstCaseCalls += grant.granted * amplification;
            budget = grant.budget;
          }
          expect(worstCaseCalls).toBe(budget.granted);
          expect(worstCaseCalls).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("keeps the undo reserve from forward steps, and lets undos spend it", () => {
    const spent = grantAllowance({ limit: 12, granted: 0, undoReserve: 4 }, 20);
    expect(spent).toEqual({ granted: 8, budget: { limit: 12, granted: 8, undoReserve: 4 } });
    expect(grantAllowance(spent.budget, 1).granted).toBe(0);
    expect(remainingCalls(spent.budget, "undo")).toBe(4);
    const undo = grantAllowance(spent.budget, 3, 1, "undo");
    expect(undo).toEqual({ granted: 3, budget: { limit: 12, granted: 11, undoReserve: 4 } });
    expect(grantAllowance(undo.budget, 3, 1, "undo").granted).toBe(1);
  });

  it("lets undos spend what forward steps left over, beyond the reserve", () => {
    const undo = grantAllowance({ limit: 12, granted: 2, undoReserve: 4 }, 10, 1, "undo");
    expect(undo.granted).toBe(10);
  });
});
