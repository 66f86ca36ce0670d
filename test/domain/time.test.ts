import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { instantExists } from "../../src/domain/time.js";

/** What the arithmetic must agree with: the instant a Date makes of the text prints as the text. */
function existsByDate(text: string): boolean {
  const time = Date.parse(text);
  return !Number.isNaN(time) && new Date(time).toISOString() === text;
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

describe("instantExists", () => {
  it("agrees with Date on every instant of the right form, existing or not", () => {
    const instant = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        // Each field from just below its range to just past it, so the edges come up often.
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 0, max: 61 }),
        fc.integer({ min: 0, max: 61 }),
        fc.integer({ min: 0, max: 999 }),
      )
      .map(
        ([y, mo, d, h, mi, s, ms]) =>
          `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(ms, 3)}Z`,
      );
    fc.assert(
      fc.property(instant, (text) => instantExists(text) === existsByDate(text)),
      { numRuns: 20_000 },
    );
  });

  it("knows the leap years and the last instant of a day", () => {
    expect(instantExists("2024-02-29T00:00:00.000Z")).toBe(true);
    expect(instantExists("2026-02-29T00:00:00.000Z")).toBe(false);
    expect(instantExists("2000-02-29T12:00:00.000Z")).toBe(true);
    expect(instantExists("2100-02-29T12:00:00.000Z")).toBe(false);
    expect(instantExists("2026-12-31T23:59:59.999Z")).toBe(true);
    expect(instantExists("2026-04-31T00:00:00.000Z")).toBe(false);
    expect(instantExists("2026-01-01T00:60:00.000Z")).toBe(false);
  });
});
