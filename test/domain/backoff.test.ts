import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backoffCeilingMs, fullJitterDelayMs, seededRandom } from "../../src/domain/backoff.js";

const policy = { baseMs: 100, capMs: 10_000 };

describe("full-jitter backoff", () => {
  it("doubles the ceiling per retry up to the cap", () => {
    expect([1, 2, 3, 4, 7, 8, 100].map((n) => backoffCeilingMs(policy, n))).toEqual([
      100, 200, 400, 800, 6_400, 10_000, 10_000,
    ]);
    expect(() => backoffCeilingMs(policy, 0)).toThrow(RangeError);
  });

  it("draws every delay from [0, ceiling) using only the injected random source", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retry, r) => {
          const delay = fullJitterDelayMs(policy, retry, () => r);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThan(Math.max(1, backoffCeilingMs(policy, retry)));
        },
      ),
      { numRuns: 1_000 },
    );
    expect(fullJitterDelayMs(policy, 3, () => 0.5)).toBe(200);
    expect(() => fullJitterDelayMs(policy, 1, () => 1)).toThrow(/\[0, 1\)/);
  });

  it("spreads delays across the interval rather than bunching them", () => {
    const random = seededRandom(7);
    const delays = Array.from({ length: 2_000 }, () => fullJitterDelayMs(policy, 5, random));
    const lowerHalf = delays.filter((d) => d < 800).length;
    expect(lowerHalf / delays.length).toBeGreaterThan(0.45);
    expect(lowerHalf / delays.length).toBeLessThan(0.55);
  });

  it("seeded sources repeat exactly and differ between seeds", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const seqA = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(seqA);
    expect(Array.from({ length: 5 }, c)).not.toEqual(seqA);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});
