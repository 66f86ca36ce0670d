import { describe, expect, it } from "vitest";
import { parseBenchOptions, UsageError, YARDSTICKS } from "../../bench/bench-options.js";
import { processedAt } from "../../bench/open-loop.js";
import { distribution } from "../../laptop/simulation/distribution.js";

describe("npm run bench options", () => {
  it("default to every yardstick, 5,000 orders (1,000 on the Azure path), 100, 200 and 400 orders/s for 20 s each, into docs", () => {
    expect(parseBenchOptions([])).toEqual({
      orders: 5_000,
      azureOrders: 1_000,
      engineOrders: 200,
      engineRounds: 2,
      rates: [100, 200, 400],
      seconds: 20,
      only: [...YARDSTICKS],
      out: "docs",
      json: false,
    });
  });

  it("take what is asked for, and run a subset in the usual order whatever order it is named in", () => {
    const args = [
      "--orders",
      "300",
      "--rates",
      "50, 75",
      "--seconds",
      "3",
      "--only",
      "work,memory,throughput",
    ];
    expect(parseBenchOptions([...args, "--azure-orders", "20", "--out", "/tmp/x", "--json"])).toEqual({
      orders: 300,
      azureOrders: 20,
      engineOrders: 200,
      engineRounds: 2,
      rates: [50, 75],
      seconds: 3,
      only: ["throughput", "memory", "work"],
      out: "/tmp/x",
      json: true,
    });
  });

  it.each([
    [["--orders", "0"]],
    [["--orders", "5e3"]],
    [["--orders", "1000001"]],
    [["--azure-orders", "0"]],
    [["--azure-orders", "100001"]],
    [["--azure-orders", "1e3"]],
    [["--rates", "100,0"]],
    [["--rates", "100,100"]],
    [["--rates", "1.5"]],
    [["--rates", ""]],
    [["--seconds", "-1"]],
    [["--seconds", "3601"]],
    [["--only", "throughput,speed"]],
    [["--only", ""]],
    [["--out", " "]],
    [["--json=yes"]],
    [["--order", "10"]],
    [["5000"]],
  ])("refuse %j", (args) => {
    expect(() => parseBenchOptions(args)).toThrow(UsageError);
  });
});

describe("distribution", () => {
  it("takes nearest-rank percentiles", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 down to 1
    expect(distribution(hundred)).toEqual({ count: 100, p50: 50, p99: 99, max: 100 });
    expect(distribution([7])).toEqual({ count: 1, p50: 7, p99: 7, max: 7 });
  });

  it("keeps an infinitely late value at the top, and has no figures for an empty sample", () => {
    expect(distribution([1, 2, Number.POSITIVE_INFINITY]).max).toBe(Number.POSITIVE_INFINITY);
    expect(distribution([])).toEqual({ count: 0, p50: null, p99: null, max: null });
  });
});

describe("the open loop's time of reaching Processed", () => {
  const base = { updatedAt: "2030-01-01T00:00:09.000Z" };
  const entry = (to: "Processing" | "Processed", at: string) => ({
    at,
    actor: "agent",
    command: "settle",
    from: "Processing" as const,
    to,
    attempt: 1,
    step: null,
    code: null,
  });

  it("is the history's entry into Processed, not the record's last change", () => {
    const history = [
      entry("Processing", "2030-01-01T00:00:01.000Z"),
      entry("Processed", "2030-01-01T00:00:02.500Z"),
    ];
    expect(processedAt({ ...base, processState: "Processed", history })).toBe(
      Date.parse("2030-01-01T00:00:02.500Z"),
    );
  });

  it("is the last change when the entry was folded out of the history, and none for other states", () => {
    expect(processedAt({ ...base, processState: "Processed", history: [] })).toBe(Date.parse(base.updatedAt));
    expect(processedAt({ ...base, processState: "Error", history: [] })).toBeNull();
  });
});
