import { describe, expect, it } from "vitest";
import { type BenchOptions, parseBenchOptions, UsageError } from "../../bench/bench-options.js";
import { type Runs, renderTable, reportRows, summarise } from "../../bench/bench-report.js";
import type { EngineRun } from "../../bench/engine-run.js";
import { type EnginesResult, parseEnginesOptions } from "../../bench/engines.js";
import { parseStat } from "../../bench/process-tree-cpu.js";

const ONLY_ENGINES: BenchOptions = parseBenchOptions(["--only", "engines"]);

function run(engine: EngineRun["engine"], seconds: number, overrides: Partial<EngineRun> = {}): EngineRun {
  const extension = engine === "extension";
  return {
    engine,
    orders: 200,
    seconds,
    cpu: {
      host: extension ? { node: 4_000, dotnet: 8_000 } : { node: 3_000 },
      azurite: extension ? 6_000 : 20,
      benchStandIns: 2_000,
    },
    historyRows: extension ? 12_000 : 400,
    states: { Processed: 200 },
    effects: { orders: 200, once: 200, duplicates: 0 },
    storage: extension
      ? {
          byService: { blob: 200, queue: 10_000, table: 6_000 },
          byOperation: { "queue GET messages": 8_000, "table POST batch": 4_000, "blob PUT lease": 200 },
          total: 16_200,
        }
      : { byService: { blob: 0, queue: 0, table: 0 }, byOperation: {}, total: 0 },
    ...overrides,
  };
}

function sitting(runs: EngineRun[]): EnginesResult {
  return { orders: 200, rounds: 2, dotnet: "10.0.100", runs, load: { before: 1.5, after: 2.25 } };
}

function report(engines: NonNullable<Runs["engines"]>) {
  const rows = reportRows(ONLY_ENGINES, { engines });
  return { rows, summary: summarise(ONLY_ENGINES, rows) };
}

const ok = <T>(value: T) => ({ ok: true as const, value, seconds: 1 });

describe("F23-1: the engines yardstick's options", () => {
  it("is selected by --only engines, 200 orders a run and two rounds unless told", () => {
    expect(ONLY_ENGINES).toMatchObject({ only: ["engines"], engineOrders: 200, engineRounds: 2 });
    expect(parseEnginesOptions([])).toEqual({ orders: 200, rounds: 2 });
  });

  it("takes the orders and rounds asked for, in the bench and in its own script", () => {
    const options = parseBenchOptions([
      "--only",
      "engines,work",
      "--engine-orders",
      "50",
      "--engine-rounds",
      "3",
    ]);
    expect(options).toMatchObject({ only: ["work", "engines"], engineOrders: 50, engineRounds: 3 });
    expect(parseEnginesOptions(["--orders", "7", "--rounds", "1"])).toEqual({ orders: 7, rounds: 1 });
  });

  it.each([
    [["--engine-orders", "0"]],
    [["--engine-orders", "100001"]],
    [["--engine-orders", "2e2"]],
    [["--engine-rounds", "0"]],
    [["--engine-rounds", "11"]],
    [["--only", "engine"]],
  ])("refuses %j", (args) => {
    expect(() => parseBenchOptions(args)).toThrow(UsageError);
  });

  it("refuses its script's bad flags", () => {
    expect(() => parseEnginesOptions(["--rounds", "0"])).toThrow(UsageError);
    expect(() => parseEnginesOptions(["--engine", "local"])).toThrow(UsageError);
  });
});

describe("F23-2: the engines yardstick's report", () => {
  const runs = [run("local", 10), run("extension", 40), run("local", 14), run("extension", 30)];

  it("puts both engines side by side, medians of their runs, with the extension's ratio to ours", () => {
    const { rows } = report(ok(sitting(runs)));
    const value = (start: string) => rows.find((r) => r.figure.trim().startsWith(start))?.value;
    // 200 orders in 10 and 14 s: 20 and 14.3 orders/s, median 17.1; in 40 and 30 s: 5 and 6.7, median 5.8.
    expect(value("sas host, 200 orders a run")).toBe(
      "local 17.1 · extension 5.8 orders/s; extension / local 0.34",
    );
    expect(value("each run")).toBe("local 10.0, extension 40.0, local 14.0, extension 30.0");
    expect(value("CPU per order, the host's processes")).toBe(
      "local 15.0 · extension 60.0 ms; extension / local 4.00 (local: node 15.0; extension: dotnet 40.0, node 20.0)",
    );
    expect(value("CPU per order, the stand-ins")).toBe(
      "local: Azurite 0.10 ms, broker, Cosmos DB, partner and proxy 10.00 ms · extension: Azurite 30.00 ms, broker, Cosmos DB, partner and proxy 10.00 ms",
    );
    expect(value("history rows per order")).toBe("local 2.0 · extension 60.0 rows; extension / local 30.00");
    expect(value("storage transactions per order")).toBe(
      "local 0.0 (queue 0.0, table 0.0, blob 0.0) · extension 81.0 (queue 50.0, table 30.0, blob 1.0)",
    );
    expect(value("the extension's storage transactions per order, by operation")).toBe(
      "queue GET messages 40.0, table POST batch 20.0, blob PUT lease 1.0",
    );
    expect(value("load average")).toBe("1.50 / 2.25");
  });

  it("holds each effect applied once in every run to its floor, and passes", () => {
    const { rows, summary } = report(ok(sitting(runs)));
    const effects = rows.find((r) => r.figure.includes("each effect applied once"));
    expect(effects).toMatchObject({ floor: "every order, every run", verdict: "pass" });
    expect(summary).toMatchObject({ failed: [], missed: [], exitCode: 0 });
    expect(renderTable(ONLY_ENGINES, rows, summary)).toContain("extension / local 0.34");
  });

  it("misses the floor when one run applied an effect twice, names the run, and exits 1", () => {
    const twice = run("extension", 30, { effects: { orders: 200, once: 199, duplicates: 1 } });
    const { summary } = report(ok(sitting([runs[0] as EngineRun, twice])));
    expect(summary.exitCode).toBe(1);
    expect(summary.missed).toEqual([
      "each effect applied once (the partner's ledger): local 200 of 200, extension 199 of 200, 1 applied twice or more, floor every order, every run",
    ]);
  });

  it("reports the yardstick as not run, with the reason, without failing the bench", () => {
    const notRun: EnginesResult = {
      orders: 200,
      rounds: 2,
      notRun: "no .NET SDK 8 or later for Microsoft's Durable Task extension (no dotnet command)",
      runs: [],
      load: { before: 1, after: 1 },
    };
    const { rows, summary } = report(ok(notRun));
    expect(rows.map((r) => [r.figure, r.verdict])).toEqual([["sas host on both engines", "not run"]]);
    expect(summary).toMatchObject({ failed: [], missed: [], exitCode: 0 });
    expect(summary.notChecked[0]).toBe(
      "sas host on both engines: not run: no .NET SDK 8 or later for Microsoft's Durable Task extension (no dotnet command)",
    );
  });

  it("fails the bench when its run failed", () => {
    const { rows, summary } = report({
      ok: false,
      error: "exit 1: sas host did not start in time",
      seconds: 5,
    });
    expect(rows[0]).toMatchObject({ verdict: "failed", value: "exit 1: sas host did not start in time" });
    expect(summary.exitCode).toBe(1);
  });
});

describe("F23-3: a process's CPU from /proc", () => {
  it("reads the name, the parent and user plus system time, a name with spaces and parentheses included", () => {
    const line = "4242 (dotnet (x) y) S 4200 4242 4200 0 -1 4194560 100 0 0 0 250 130 7 9 20 0 30 0 12345";
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 4200, name: "dotnet (x) y", ms: 3_800 });
  });
});
