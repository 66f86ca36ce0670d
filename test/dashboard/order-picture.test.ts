/**
 * The order picture's layout (web/dashboard/order-picture.js) on its own: its time axis has at least
 * three readable ticks at any span, from milliseconds to days, whose labels never run into each other;
 * a step's name goes inside its bar when it fits and below it otherwise, never over another name.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

interface Segment {
  start: number;
  end: number;
  x: number;
  width: number;
}
interface Scale {
  at(t: number): number;
  segments: Segment[];
}
interface Place {
  inside: boolean;
  x: number;
  row: number;
}
interface OrderPictureModule {
  gapScale(intervals: [number, number][], left: number, right: number): Scale;
  axisTicks(scale: Scale): { at: number; x: number; label: string }[];
  labelWidth(text: string): number;
  placeLabels(bars: { x1: number; x2: number; text: string }[]): { places: Place[]; rows: number };
}

const modulePath = pathToFileURL(join(import.meta.dirname, "../../web/dashboard/order-picture.js")).href;
const { gapScale, axisTicks, labelWidth, placeLabels } = (await import(modulePath)) as OrderPictureModule;
const START = Date.parse("2026-03-02T09:00:30.123Z");

describe("F27-5: the order picture's axis and labels", () => {
  it("has at least three ticks, none running into the next, whether the order took 20 ms or three days", () => {
    for (const span of [20, 300, 4_000, 95_000, 40 * 60_000, 7 * 3_600_000, 3 * 86_400_000]) {
      const ticks = axisTicks(gapScale([[START, START + span]], 110, 750));
      expect(ticks.length, `${span} ms`).toBeGreaterThanOrEqual(3);
      for (const [i, tick] of ticks.slice(1).entries()) {
        const before = ticks[i];
        if (!before) throw new Error("no tick before");
        expect(tick.x - before.x, `${span} ms: ${before.label} and ${tick.label}`).toBeGreaterThanOrEqual(
          (labelWidth(before.label) + labelWidth(tick.label)) / 2,
        );
        expect(tick.at).toBeGreaterThan(before.at);
      }
    }
  });

  it("labels ticks as finely as they are apart: to the millisecond, the second, the minute, the day", () => {
    const labels = (span: number) =>
      axisTicks(gapScale([[START, START + span]], 110, 750)).map((t) => t.label);
    expect(labels(300).every((l) => /^\d\d:\d\d:\d\d\.\d{1,3}$/.test(l))).toBe(true);
    expect(labels(95_000).every((l) => /^\d\d:\d\d:\d\d$/.test(l))).toBe(true);
    expect(labels(7 * 3_600_000).every((l) => /^\d\d:\d\d$/.test(l))).toBe(true);
    expect(labels(30 * 86_400_000).every((l) => /^\d{4}-\d\d-\d\d$/.test(l))).toBe(true);
  });

  it("ticks each stretch of a cut axis, or at least its start", () => {
    const scale = gapScale(
      [
        [START, START + 800],
        [START + 120_000, START + 123_300],
      ],
      110,
      750,
    );
    expect(scale.segments).toHaveLength(2);
    const ticks = axisTicks(scale);
    for (const segment of scale.segments) {
      expect(ticks.some((t) => t.at >= segment.start && t.at <= segment.end)).toBe(true);
    }
  });

  it("names a short step below its bar, and stacks names that would run into each other", () => {
    const { places, rows } = placeLabels([
      { x1: 120, x2: 400, text: "chargePayment" },
      { x1: 400, x2: 405, text: "arrangeShipment" },
      { x1: 405, x2: 411, text: "notifyCustomer" },
      { x1: 600, x2: 606, text: "↶ reserveInventory" },
    ]);
    expect(places.map((p) => (p.inside ? "inside" : `row ${p.row}`))).toEqual([
      "inside",
      "row 0",
      "row 1",
      "row 0",
    ]);
    expect(rows).toBe(2);
    expect(places[1]?.x).toBe(400);
  });
});
