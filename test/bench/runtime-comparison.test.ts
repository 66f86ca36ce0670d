import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { figuresFromOutput, parseCompareOptions } from "../../bench/runtime-compare.js";
import {
  compareRuns,
  comparisonTable,
  type Figures,
  median,
  type RuntimeReport,
  runtimeFigures,
} from "../../bench/runtime-comparison.js";
import { parseCpuOptions } from "../../bench/runtime-cpu.js";
import { UsageError } from "../../laptop/cli/usage-error.js";

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

const figures = (sequence: number, race: number, theirs?: number) =>
  runtimeFigures(report(sequence, race, theirs));

describe("runtime benchmark comparison", () => {
  it("takes the middle value, or the mean of the two middle ones", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("reads a bench:runtime report as four figures a scenario, in its order", () => {
    expect(figures(4_000, 6_000, 2_000)).toEqual({
      "sequence, ours (memory)": 4_000,
      "sequence, ours (file)": 2_000,
      "sequence, durabletask-js": 2_000,
      "sequence, ours (memory) / durabletask-js": 2,
      "race, ours (memory)": 6_000,
      "race, ours (file)": 3_000,
      "race, durabletask-js": 2_000,
      "race, ours (memory) / durabletask-js": 3,
    });
  });

  it("pairs the i-th runs of each build, so a drift that moves both does not show as a difference", () => {
    // The machine slows down over the sitting; the head is 10% faster on the sequence in every pair.
    const base = [figures(1_000, 2_000), figures(800, 1_600), figures(600, 1_200)];
    const head = [figures(1_100, 2_000), figures(880, 1_500), figures(660, 1_300)];
    const rows = compareRuns(base, head);
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
    expect(rows.map((r) => r.figure)).toEqual(Object.keys(figures(1, 1)));
  });

  it("pairs runs in the order they were made, not sorted", () => {
    // Paired: 3, 0.5 and 2 (median 2); sorted before pairing, the ratios would be 1, 1.5 and 2 (median 1.5).
    const base = [100, 200, 300].map((rate) => figures(rate, 1));
    const head = [300, 100, 600].map((rate) => figures(rate, 1));
    expect(compareRuns(base, head)[0]).toMatchObject({
      medianPairRatio: 2,
      headHigherIn: 2,
      ratioOfMedians: 1.5,
    });
  });

  it("compares only as many pairs as both builds ran, and refuses none or a run without a figure", () => {
    expect(compareRuns([figures(1, 1), figures(2, 2)], [figures(2, 2)])[0]?.pairs).toBe(1);
    expect(() => compareRuns([], [figures(1, 1)])).toThrow(/no pair/);
    const partial: Figures = { "sequence, orchestrations/s": 1 };
    expect(() => compareRuns([{ ...partial, "race, orchestrations/s": 1 }], [partial])).toThrow(
      /no figure "race, orchestrations\/s"/,
    );
  });

  it("prints a row a figure: ratios with two decimals, rates as whole numbers, milliseconds with four", () => {
    const table = comparisonTable(compareRuns([figures(4_000, 6_000)], [figures(4_400, 5_400)]));
    expect(table).toMatch(/sequence, ours \(memory\) +4,000 +4,400 +1\.100 +1\.100 +1 of 1/);
    expect(table).toMatch(/race, ours \(memory\) \/ durabletask-js +6\.00 +5\.40 +0\.900 +0\.900 +0 of 1/);
    const cpu = comparisonTable(
      compareRuns([{ "race, CPU ms per orchestration": 0.25 }], [{ "race, CPU ms per orchestration": 0.2 }]),
    );
    expect(cpu).toMatch(/race, CPU ms per orchestration +0\.2500 +0\.2000 +0\.800 +0\.800 +0 of 1/);
  });
});

describe("bench:runtime:compare options", () => {
  it("needs a base checkout with the benchmark and its dependencies", () => {
    expect(() => parseCompareOptions([])).toThrow(UsageError);
    expect(() => parseCompareOptions(["--base", "/nonexistent-checkout"])).toThrow(/no bench\/runtime\.ts/);
  });

  it("defaults to bench:runtime, 8 pairs of 500 instances; the cpu yardstick to 1,000", () => {
    expect(parseCompareOptions(["--base", "."])).toMatchObject({
      base: resolve("."),
      yardstick: "bench",
      pairs: 8,
      instances: 500,
      json: false,
    });
    expect(
      parseCompareOptions(["--base", ".", "--yardstick", "cpu", "--pairs", "3", "--json"]),
    ).toMatchObject({
      yardstick: "cpu",
      pairs: 3,
      instances: 1_000,
      json: true,
    });
  });

  it("refuses an unknown yardstick, counts out of range and unknown flags", () => {
    expect(() => parseCompareOptions(["--base", ".", "--yardstick", "wall"])).toThrow(/--yardstick wall/);
    expect(() => parseCompareOptions(["--base", ".", "--pairs", "0"])).toThrow(/--pairs 0/);
    expect(() => parseCompareOptions(["--base", ".", "--instances", "x"])).toThrow(UsageError);
    expect(() => parseCompareOptions(["--base", ".", "--fast"])).toThrow(UsageError);
  });
});

describe("bench/runtime-cpu.ts options", () => {
  it("measures this checkout by default, 8 runs of 1,000 instances, or the checkout it is given", () => {
    expect(parseCpuOptions([], ".")).toMatchObject({
      root: resolve("."),
      instances: 1_000,
      runs: 8,
      json: false,
    });
    expect(
      parseCpuOptions(["--root", ".", "--runs", "2", "--instances", "10", "--json"], "/elsewhere"),
    ).toMatchObject({
      instances: 10,
      runs: 2,
      json: true,
    });
  });

  it("refuses a directory without the runtime, one run (it would be the unmeasured warm-up) and unknown flags", () => {
    expect(() => parseCpuOptions(["--root", "/nonexistent-checkout"], ".")).toThrow(
      /no local durable runtime/,
    );
    expect(() => parseCpuOptions(["--runs", "1"], ".")).toThrow(/--runs 1/);
    expect(() => parseCpuOptions(["--quick"], ".")).toThrow(UsageError);
  });
});

describe("bench:runtime:compare reading a run's output", () => {
  it("takes the last line: a bench:runtime report or bench/runtime-cpu.ts's figures", () => {
    const bench = JSON.stringify({ instances: 500, ...report(4_000, 6_000) });
    expect(figuresFromOutput(`warming up\n${bench}\n`)).toEqual(figures(4_000, 6_000));
    const cpu = { "race, CPU ms per orchestration": 0.2 };
    expect(figuresFromOutput(`${JSON.stringify({ root: ".", figures: cpu })}\n`)).toEqual(cpu);
  });

  it("finds nothing in output that ends otherwise", () => {
    expect(figuresFromOutput("")).toBeUndefined();
    expect(figuresFromOutput(`${JSON.stringify(report(1, 1))}\nTypeError: boom`)).toBeUndefined();
    expect(figuresFromOutput("{ not json")).toBeUndefined();
    expect(figuresFromOutput('{"something":"else"}')).toBeUndefined();
  });
});
