import { describe, expect, it } from "vitest";
import { parseCompareOptions } from "../../bench/runtime-compare.js";
import {
  compareRuntimeRuns,
  comparisonTable,
  median,
  type RuntimeReport,
} from "../../bench/runtime-comparison.js";
import { UsageError } from "../../src/local/usage-error.js";

function report(sequence: number, race: number, theirs = 1_000): RuntimeReport {
  return {
    scenarios: [
      {
        scenario: "sequence",
        ours: { memory: sequence, file: sequence / 2 },
        theirs,
        ratio: sequence / theirs,
      },
      { scenario: "race", ours: { memory: race, file: race / 2 }, theirs, ratio: race / theirs },
    ],
  };
}

describe("bench:runtime comparison", () => {
  it("takes the middle value, or the mean of the two middle ones", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("pairs the i-th runs of each build, so a drift that moves both does not show as a difference", () => {
    // The machine slows down over the sitting; the head is 10% faster in every pair.
    const base = [report(1_000, 2_000), report(800, 1_600), report(600, 1_200)];
    const head = [report(1_100, 2_000), report(880, 1_500), report(660, 1_300)];
    const rows = compareRuntimeRuns(base, head);
    const row = (figure: string) => rows.find((r) => r.figure === figure);
    expect(row("sequence, ours (memory)")).toEqual({
      figure: "sequence, ours (memory)",
      baseMedian: 800,
      headMedian: 880,
      ratioOfMedians: 1.1,
      medianPairRatio: 1.1,
      headHigherIn: 3,
      pairs: 3,
    });
    expect(row("race, ours (file)")).toMatchObject({ baseMedian: 800, headMedian: 750, headHigherIn: 1 });
    expect(row("race, ours (memory)")?.medianPairRatio).toBeCloseTo(1, 10);
    expect(row("sequence, durabletask-js")).toMatchObject({ ratioOfMedians: 1, headHigherIn: 0 });
    expect(rows.map((r) => r.figure)).toHaveLength(8);
  });

  it("compares only as many pairs as both builds ran, and refuses none", () => {
    expect(compareRuntimeRuns([report(1, 1), report(2, 2)], [report(2, 2)])[0]?.pairs).toBe(1);
    expect(() => compareRuntimeRuns([], [report(1, 1)])).toThrow(/no pair/);
    const missing: RuntimeReport = {
      scenarios: [report(1, 1).scenarios[0] as RuntimeReport["scenarios"][number]],
    };
    expect(() => compareRuntimeRuns([report(1, 1)], [missing])).toThrow(/no race scenario/);
  });

  it("prints a row a figure, ratios with two decimals and rates as whole numbers", () => {
    const table = comparisonTable(compareRuntimeRuns([report(4_000, 6_000)], [report(4_400, 5_400)]));
    expect(table).toMatch(/sequence, ours \(memory\) +4,000 +4,400 +1\.100 +1\.100 +1 of 1/);
    expect(table).toMatch(/race, ours \(memory\) \/ durabletask-js +6\.00 +5\.40 +0\.900 +0\.900 +0 of 1/);
  });
});

describe("bench:runtime:compare options", () => {
  it("needs a base checkout with the benchmark and its dependencies", () => {
    expect(() => parseCompareOptions([])).toThrow(UsageError);
    expect(() => parseCompareOptions(["--base", "/nonexistent-checkout"])).toThrow(/no bench\/runtime\.ts/);
  });

  it("defaults to 8 pairs of 500 instances, and refuses counts out of range and unknown flags", () => {
    expect(parseCompareOptions(["--base", "."])).toMatchObject({ pairs: 8, instances: 500, json: false });
    expect(parseCompareOptions(["--base", ".", "--pairs", "3", "--json"])).toMatchObject({
      pairs: 3,
      json: true,
    });
    expect(() => parseCompareOptions(["--base", ".", "--pairs", "0"])).toThrow(/--pairs 0/);
    expect(() => parseCompareOptions(["--base", ".", "--instances", "x"])).toThrow(UsageError);
    expect(() => parseCompareOptions(["--base", ".", "--fast"])).toThrow(UsageError);
  });
});
