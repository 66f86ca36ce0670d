import { describe, expect, it } from "vitest";
import type { AzureWork } from "../../bench/azure-work.js";
import { type BenchOptions, parseBenchOptions } from "../../bench/bench-options.js";
import {
  type ChildExit,
  type Context,
  explainDemo,
  type OpenLoopResult,
  outcomeOf,
  type RunOutcome,
  type Runs,
  type RuntimeResult,
  renderPage,
  renderTable,
  reportRows,
  type SupervisorResult,
  summarise,
} from "../../bench/bench-report.js";
import type { RateResult } from "../../bench/open-loop.js";
import { combinedRate } from "../../bench/side-by-side.js";
import type { WorkResult } from "../../bench/work.js";
import type { DemoSummary } from "../../laptop/embedded/demo.js";
import { distribution } from "../../laptop/simulation/distribution.js";

const ok = <T>(value: T): RunOutcome<T> => ({ ok: true, value, seconds: 1 });

function demo(where: "file" | "memory", ordersPerSecond: number, peakRssMb = 300): DemoSummary {
  return {
    orders: {
      submitted: 5_000,
      deadLettered: 0,
      Pending: 0,
      Processing: 0,
      Processed: 5_000,
      Error: 0,
      Compensating: 0,
      Compensated: 0,
      CompensationFailed: 0,
    },
    partner: { calls: 15_000, effects: 15_000, duplicateEffects: 0 },
    supervisor: { scans: 10, resets: 0, toError: 0 },
    invariants: { ok: true, violations: [] },
    throughput: { ordersPerSecond },
    window: { from: "2030-01-01T00:00:00.000Z", to: "2030-01-01T00:00:08.333Z" },
    cpu: { msPerOrder: where === "file" ? 2.5 : 2, coresBusy: 1.25, cores: 2 },
    latencyMs: { p50: 9_000, p99: 16_000 },
    submission: { seconds: 0.4, unsettledWhenPosted: 4_990 },
    storage: {
      database: where,
      journalMode: where === "file" ? "wal" : "memory",
      synchronous: "NORMAL",
      commits: where === "file" ? 65_000 : null,
      commitsPerSecond: where === "file" ? 3_250 : null,
      rowsWritten: 350_000,
      rowsWrittenPerSecond: 17_500,
      singleRowCommitsPerSecond: where === "file" ? 56_000 : 900_000,
    },
    peakRssMb,
  };
}

function rate(r: number, latencies: number[], refused = 0): RateResult {
  return {
    rate: r,
    seconds: 20,
    sent: latencies.length + refused,
    accepted: latencies.length,
    refused,
    errors: 0,
    errorSamples: [],
    achievedRate: r - 0.1,
    sendLagMs: distribution([0.5]),
    answerMs: distribution([2]),
    outcomes: { Processed: latencies.filter(Number.isFinite).length },
    latencyMs: distribution(latencies),
    warmup: { seconds: 5, sent: 5 * r, accepted: 5 * r, latencyMs: distribution([4, 180, 320]) },
  };
}

/** 100 latencies of 1..100 ms, scaled: p99 is 99 × scale. */
const latencies = (scale: number) => Array.from({ length: 100 }, (_, i) => (i + 1) * scale);

/** 100 latencies whose p99 is exactly `p99`: 98 at half of it, then it, then 3 ms more. */
const tail = (p99: number) => [...Array.from({ length: 98 }, () => p99 / 2), p99, p99 + 3];

const openLoop = (p99At200: number): OpenLoopResult => ({
  durability: "file, WAL, synchronous=NORMAL (sas start)",
  rates: [rate(100, latencies(1)), rate(200, tail(p99At200)), rate(400, latencies(5))],
});

const runtime = (sequence: number, race: number): RuntimeResult => ({
  instances: 500,
  file: "WAL, synchronous=NORMAL",
  scenarios: [
    {
      scenario: "sequence",
      label: "5-activity sequence",
      ours: { memory: 2_000, file: 900 },
      theirs: 2_000 / sequence,
      ratio: sequence,
    },
    {
      scenario: "race",
      label: "activity, then event vs timer",
      ours: { memory: 6_000, file: 1_500 },
      theirs: 6_000 / race,
      ratio: race,
    },
  ],
});

const supervisor: SupervisorResult = {
  pageSize: 100,
  expired: 100,
  inFlight: 200,
  rows: [
    { store: "sqlite", size: 10_000, scan: { found: 100, documentsRead: 100, requestUnits: 0, ms: 0.7 } },
    { store: "cosmos", size: 10_000, scan: { found: 100, documentsRead: 200, requestUnits: 101, ms: 26.2 } },
  ],
};

/** Two demos side by side, in memory and on disk, whose rates add up to `memory` and `disk`. */
const sideBySide = (memory: number, disk: number) => ({
  results: (["memory", "disk"] as const).map((where) => {
    const summed = where === "memory" ? memory : disk;
    const runs = [
      {
        ordersPerSecond: summed / 2 - 5,
        cpuMsPerOrder: 2.5,
        from: "2030-01-01T00:00:00.000Z",
        to: "2030-01-01T00:00:12.500Z",
      },
      {
        ordersPerSecond: summed / 2 + 5,
        cpuMsPerOrder: 2.4,
        from: "2030-01-01T00:00:00.200Z",
        to: "2030-01-01T00:00:12.400Z",
      },
    ];
    return {
      where,
      processes: 2,
      ordersEach: 5_000,
      runs,
      combinedOrdersPerSecond: combinedRate(5_000, runs),
      summedOrdersPerSecond: summed,
    };
  }),
});

/** 100 orders through sas host: per order 28 Cosmos DB requests and 6 Service Bus operations. */
const azure: AzureWork = {
  orders: 100,
  seconds: 12.5,
  cosmos: {
    byKind: {
      metadata: 3,
      "records.create": 100,
      "records.read": 100,
      "records.replace": 500,
      "records.replace.412": 10,
      "records.query": 150,
      "recovery.read.404": 100,
      "recovery.create": 100,
      "recovery.replace": 700,
      "recovery.delete": 100,
      "breakers.read.404": 200,
      "leases.read": 37,
    },
    requests: 2_100,
    requestUnitsEstimate: 20_200,
    requestUnitsByKind: {
      "records.create": 700,
      "records.read": 100,
      "records.replace": 6_000,
      "records.replace.412": 10,
      "records.query": 450,
      "recovery.read.404": 100,
      "recovery.create": 500,
      "recovery.replace": 11_603,
      "recovery.delete": 500,
      "breakers.read.404": 200,
      "leases.read": 37,
    },
    bytesWritten: { records: 1_250_000, recovery: 60_000 },
  },
  serviceBus: {
    byKind: { "orders.send": 100, "orders.receive": 100, "orders.complete": 100, "order-status.send": 300 },
    operations: 600,
  },
  durable: {
    orders: 0,
    instances: 100,
    episodes: 600,
    historyEvents: 2_800,
    historyBytes: 702_700,
    activities: 500,
    timers: 400,
    stateWrites: null,
  },
  partnerCalls: 400,
  states: { Processed: 98, Compensated: 2 },
};

const work: WorkResult = {
  embedded: {
    orders: 5_000,
    durability: "file, WAL, synchronous=NORMAL",
    durable: {
      orders: 5_000,
      instances: 5_000,
      episodes: 50_000,
      historyEvents: 220_000,
      historyBytes: 45_000_000,
      activities: 45_000,
      timers: 20_000,
      stateWrites: 30_000,
    },
    partnerCalls: 20_000,
    rowsWritten: 380_000,
  },
  azure,
};

/** Every yardstick at or past its floor; ours replaying in full is below the peer, which no floor holds. */
function passing(): Runs {
  return {
    demoDisk: ok(demo("file", 600)),
    demoMemory: ok(demo("memory", 1_000)),
    openLoop: ok(openLoop(250)),
    runtime: ok(runtime(1, 1.2)),
    runtimeFullReplay: ok({ ...runtime(0.6, 0.9), replaySessions: false }),
    supervisor: ok(supervisor),
    sideBySide: ok(sideBySide(1_200, 700)),
    work: ok(work),
  };
}

const DEFAULTS = parseBenchOptions([]);

function report(runs: Runs, options: BenchOptions = DEFAULTS) {
  const rows = reportRows(options, runs);
  return { rows, summary: summarise(options, rows) };
}

const CONTEXT: Context = {
  command: "npm run bench",
  commit: "0123abc",
  date: "2030-01-01T00:00:00.000Z",
  machine: { cpu: "Test CPU", cores: 2, memoryGb: 8, platform: "linux/x64", node: "v20.0.0" },
  durability: "WAL, synchronous=NORMAL",
  seconds: 120,
};

describe("npm run bench's report", () => {
  it("passes every figure at its floor exactly, and exits 0", () => {
    const { rows, summary } = report(passing());
    const floors = rows.filter((r) => r.floor !== "").map((r) => [r.figure.trim(), r.floor, r.verdict]);
    expect(floors).toEqual([
      ["open loop at 200/s: p50 / p99 / max", "p99 ≤ 250 ms", "pass"],
      ["5-activity sequence: ours / durabletask-js", "≥ 1.00", "pass"],
      ["activity, then event vs timer: ours / durabletask-js", "≥ 1.00", "pass"],
      ["peak RSS, 5,000 orders posted at once", "< 600 MB", "pass"],
    ]);
    expect(summary).toEqual({ failed: [], missed: [], notChecked: [], exitCode: 0 });
  });

  it("holds throughput to no floor: a demo of 1 order/s is reported, and passes nothing and misses nothing", () => {
    const runs = { ...passing(), demoDisk: ok(demo("file", 1)), demoMemory: ok(demo("memory", 1)) };
    const { rows, summary } = report(runs, { ...DEFAULTS, only: ["throughput"] });
    expect(
      rows.filter((r) => r.figure.startsWith("demo,")).map((r) => [r.value, r.floor, r.verdict]),
    ).toEqual([
      ["1.0 orders/s", "", ""],
      ["1.0 orders/s", "", ""],
    ]);
    expect(summary.exitCode).toBe(0);
  });

  it("puts the run's commits and the single-row commits beside the throughput, each with its durability", () => {
    const { rows } = report(passing(), { ...DEFAULTS, only: ["throughput"] });
    const byFigure = Object.fromEntries(rows.map((r) => [`${r.durability} · ${r.figure.trim()}`, r.value]));
    expect(byFigure).toMatchObject({
      "file, WAL, synchronous=NORMAL · demo, 5,000 orders, on disk": "600.0 orders/s",
      "file, WAL, synchronous=NORMAL · SQLite commits in that run": "3,250 commits/s (13.0 an order)",
      "file, WAL, synchronous=NORMAL · single-row commits, same settings": "56,000 commits/s",
      "in memory: nothing survives the process · SQLite commits in that run": "not counted: no WAL in memory",
      "in memory: nothing survives the process · single-row commits, same settings": "900,000 commits/s",
    });
  });

  it("puts the CPU an order took beside each throughput, with the most the machine's cores could do", () => {
    const { rows } = report(passing(), { ...DEFAULTS, only: ["throughput"] });
    const cpu = rows.filter((r) => r.figure.trim() === "CPU per order, every thread").map((r) => r.value);
    expect(cpu).toEqual([
      "2.50 ms (1.25 cores busy); 2 cores doing nothing else: at most 800 orders/s",
      "2.00 ms (1.25 cores busy); 2 cores doing nothing else: at most 1,000 orders/s",
    ]);
  });

  it("reports the demos run side by side as a ceiling, judged against no floor", () => {
    const runs = { ...passing(), sideBySide: ok(sideBySide(799.5, 600)) };
    const { rows, summary } = report(runs, { ...DEFAULTS, only: ["ceiling"] });
    expect(rows.map((r) => [r.figure, r.value])).toEqual([
      [
        "2 demos of 5,000 side by side, sharing nothing, in memory",
        "800.0 orders/s together, 799.5 as the sum of their rates (each 394.8 / 404.8; CPU 2.50 / 2.40 ms an order)",
      ],
      [
        "2 demos of 5,000 side by side, sharing nothing, on disk",
        "800.0 orders/s together, 600.0 as the sum of their rates (each 295.0 / 305.0; CPU 2.50 / 2.40 ms an order)",
      ],
    ]);
    expect(rows.every((r) => r.floor === "" && r.verdict === "")).toBe(true);
    expect(summary.exitCode).toBe(0);
    expect(renderTable(DEFAULTS, rows, summary)).not.toContain("reach");
  });

  it("misses a figure below its floor, names it, and exits 1", () => {
    const runs = { ...passing(), demoDisk: ok(demo("file", 599.9, 600)), runtime: ok(runtime(0.99, 1)) };
    const { rows, summary } = report(runs);
    expect(rows.filter((r) => r.verdict === "missed").map((r) => r.figure.trim())).toEqual([
      "5-activity sequence: ours / durabletask-js",
      "peak RSS, 5,000 orders posted at once",
    ]);
    expect(summary.missed[0]).toBe(
      "5-activity sequence: ours / durabletask-js: 0.99 (2,000 / 2,020 orchestrations/s), floor ≥ 1.00",
    );
    expect(summary.exitCode).toBe(1);
  });

  it("holds the open loop's p99 to its floor at 200 orders/s only", () => {
    const slow = {
      ...passing(),
      openLoop: ok({ ...openLoop(251), rates: [rate(100, latencies(10)), rate(200, tail(251))] }),
    };
    const { rows, summary } = report(slow);
    const latency = rows.filter((r) => r.figure.startsWith("open loop"));
    expect(latency.map((r) => [r.figure, r.value, r.verdict])).toEqual([
      ["open loop at 100/s: p50 / p99 / max", "500 / 990 / 1,000 ms", ""],
      ["open loop at 200/s: p50 / p99 / max", "126 / 251 / 254 ms", "missed"],
    ]);
    expect(summary.exitCode).toBe(1);
  });

  it("shows the warm-up's latencies on a row of their own that counts toward no floor", () => {
    const { rows, summary } = report(passing(), { ...DEFAULTS, only: ["latency"] });
    const warmups = rows.filter((r) => r.figure.includes("warm-up"));
    expect(warmups.map((r) => [r.figure.trim(), r.value, r.floor, r.verdict])).toEqual(
      [500, 1_000, 2_000].map((sent) => [
        "first 5 s before it (warm-up, not counted): p50 / p99 / max",
        `180 / 320 / 320 ms (${sent.toLocaleString("en-US")} of ${sent.toLocaleString("en-US")} accepted)`,
        "",
        "",
      ]),
    );
    // Its p99 of 320 ms is past the 250 ms floor, and the verdict is still a pass.
    expect(summary.exitCode).toBe(0);
  });

  it("counts an accepted order that never reached Processed as infinitely late, and shows the refused", () => {
    const unfinished = [...latencies(1).slice(0, 98), Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
    const runs = { ...passing(), openLoop: ok({ ...openLoop(10), rates: [rate(200, unfinished, 7)] }) };
    const { rows, summary } = report(runs, { ...DEFAULTS, only: ["latency"] });
    expect(rows.map((r) => [r.value, r.verdict])).toEqual([
      ["50 / ∞ / ∞ ms", "missed"],
      ["180 / 320 / 320 ms (1,000 of 1,000 accepted)", ""],
      ["107 / 100 / 7 / 0, sent at 199.9/s, p99 0.5 ms behind schedule; 2 accepted never Processed", ""],
    ]);
    expect(summary.exitCode).toBe(1);
  });

  it("says when the 200 orders/s floor could not be checked, without failing for it", () => {
    const options = parseBenchOptions(["--rates", "50", "--only", "latency"]);
    const runs = { openLoop: ok({ ...openLoop(10), rates: [rate(50, latencies(1))] }) };
    const { summary } = report(runs, options);
    expect(summary.notChecked).toContain("open loop at 200/s p99 ≤ 250 ms: 200 is not among --rates");
    expect(summary.exitCode).toBe(0);
  });

  it("shows a failed yardstick as failed with its error, still reports the others, and exits 1", () => {
    const runs: Runs = {
      ...passing(),
      demoMemory: { ok: false, error: "exit 1: invariants broken: ord-1 | effect applied twice", seconds: 3 },
    };
    const { rows, summary } = report(runs);
    const failed = rows.filter((r) => r.verdict === "failed");
    expect(failed).toEqual([
      {
        yardstick: "throughput",
        figure: "demo, 5,000 orders, in memory: run failed",
        value: "exit 1: invariants broken: ord-1 | effect applied twice",
        floor: "",
        verdict: "failed",
        durability: "",
      },
    ]);
    expect(rows.some((r) => r.figure === "demo, 5,000 orders, on disk" && r.value === "600.0 orders/s")).toBe(
      true,
    );
    expect(rows.filter((r) => r.verdict === "pass")).toHaveLength(4);
    expect(summary.failed).toEqual([
      "demo, 5,000 orders, in memory: run failed: exit 1: invariants broken: ord-1 | effect applied twice",
    ]);
    expect(summary.exitCode).toBe(1);
    const page = renderPage(CONTEXT, DEFAULTS, rows, summary);
    expect(page).toContain("| exit 1: invariants broken: ord-1 \\| effect applied twice |  | **failed** |");
    expect(renderTable(DEFAULTS, rows, summary)).toContain("1 run(s) failed:");
  });

  it("fails the memory yardstick with the on-disk run it reads", () => {
    const runs: Runs = { demoDisk: { ok: false, error: "stopped after its limit of 420 s", seconds: 420 } };
    const { rows } = report(runs, { ...DEFAULTS, only: ["memory"] });
    expect(rows.map((r) => [r.yardstick, r.verdict, r.value])).toEqual([
      ["memory", "failed", "stopped after its limit of 420 s"],
    ]);
  });

  it("lists the floors of the yardsticks left out, and notes a batch smaller than the floors'", () => {
    const options = parseBenchOptions(["--only", "supervisor,memory", "--orders", "300"]);
    const { rows, summary } = report(passing(), options);
    expect([...new Set(rows.map((r) => r.yardstick))]).toEqual(["supervisor", "memory"]);
    expect(summary.notChecked).toEqual([
      "open loop at 200/s p99 ≤ 250 ms: not run (--only)",
      "runtime ours / durabletask-js ≥ 1.00: not run (--only)",
    ]);
    const table = renderTable(options, rows, summary);
    expect(table).toContain("the memory floor is set for 5,000 orders; this run used 300");
    expect(table).toContain("cosmos, 10,000 records, 100 expired  200 documents, 101 RU, 26.2 ms a scan");
  });

  it("aligns the table's columns and ends with the exit code in words", () => {
    const { rows, summary } = report(passing());
    const lines = renderTable(DEFAULTS, rows, summary).split("\n");
    const tableLines = lines.slice(0, rows.length + 1);
    const valueAt = tableLines[0]?.indexOf("value") ?? -1;
    const floorAt = tableLines[0]?.indexOf("floor") ?? -1;
    for (const [i, row] of rows.entries()) {
      expect(tableLines[i + 1]?.slice(valueAt).startsWith(row.value)).toBe(true);
      expect(tableLines[i + 1]?.slice(floorAt).startsWith(row.floor || " ")).toBe(true);
    }
    expect(lines[lines.length - 1]).toBe("every yardstick run met its floor: exit 0");
  });

  it("writes a page that names the command, the date, the machine, the durability and every row", () => {
    const { rows, summary } = report(passing());
    const page = renderPage(CONTEXT, DEFAULTS, rows, summary);
    expect(page).toContain(
      "Generated by `npm run bench` (`bench/bench.ts`) at commit 0123abc on 2030-01-01T00:00:00.000Z, in 120 s;",
    );
    expect(page).toContain("- Machine: Test CPU, 2 cores, 8 GB, linux/x64");
    expect(page).toContain("- Node: v20.0.0");
    expect(page).toContain("- Durability: WAL, synchronous=NORMAL");
    const tableRows = page
      .split("\n")
      .filter((line) => line.startsWith("| ") && !/^\| (yardstick|---) /.test(line));
    expect(tableRows).toHaveLength(rows.length);
    expect(page).toContain("| demo, 5,000 orders, on disk | 600.0 orders/s |  |  |");
    expect(page).toContain("**every yardstick run met its floor: exit 0**");
    expect(page).toContain("## What each figure is");
  });
});

describe("npm run bench's runtime rows", () => {
  it("hold ours with replay sessions to the floor, and show ours replaying in full beside the peer without one", () => {
    const { rows, summary } = report(passing(), { ...DEFAULTS, only: ["runtime"] });
    expect(rows.map((r) => [r.figure, r.value, r.floor, r.verdict, r.durability])).toEqual([
      [
        "5-activity sequence: ours / durabletask-js",
        "1.00 (2,000 / 2,000 orchestrations/s)",
        "≥ 1.00",
        "pass",
        "in memory, both engines; ours with replay sessions",
      ],
      [
        "activity, then event vs timer: ours / durabletask-js",
        "1.20 (6,000 / 5,000 orchestrations/s)",
        "≥ 1.00",
        "pass",
        "in memory, both engines; ours with replay sessions",
      ],
      [
        "  ours on a file, same scenarios",
        "900 and 1,500 orchestrations/s",
        "",
        "",
        "file, WAL, synchronous=NORMAL",
      ],
      [
        "5-activity sequence: ours, full replay, / durabletask-js",
        "0.60 (2,000 / 3,333 orchestrations/s)",
        "",
        "",
        "in memory, both engines; ours replaying every episode in full",
      ],
      [
        "activity, then event vs timer: ours, full replay, / durabletask-js",
        "0.90 (6,000 / 6,667 orchestrations/s)",
        "",
        "",
        "in memory, both engines; ours replaying every episode in full",
      ],
      [
        "  ours, full replay, on a file, same scenarios",
        "900 and 1,500 orchestrations/s",
        "",
        "",
        "file, WAL, synchronous=NORMAL",
      ],
    ]);
    expect(summary.exitCode).toBe(0);
  });

  it("fail the yardstick when the full-replay run fails, the sessions' rows still judged", () => {
    const runs = {
      ...passing(),
      runtimeFullReplay: { ok: false as const, error: "exit 1: out of memory", seconds: 5 },
    };
    const { rows, summary } = report(runs, { ...DEFAULTS, only: ["runtime"] });
    expect(rows[0]).toMatchObject({
      figure: "runtime against durabletask-js, ours replaying in full: run failed",
      verdict: "failed",
    });
    expect(rows.filter((r) => r.verdict === "pass")).toHaveLength(2);
    expect(summary.exitCode).toBe(1);
  });
});

describe("npm run bench's work rows", () => {
  const workRows = () => report(passing(), { ...DEFAULTS, only: ["work"] }).rows;

  it("give the embedded host's durable work, state-record writes, partner calls and rows per order", () => {
    const embedded = workRows().filter((r) => r.durability === "file, WAL, synchronous=NORMAL");
    expect(embedded.map((r) => [r.figure.trim(), r.value])).toEqual([
      [
        "embedded host (sas demo), 5,000 orders: activities / timers / episodes per order",
        "9.00 / 4.00 / 10.00",
      ],
      ["durable history per order", "44.00 events, 9,000 bytes, in 10.00 rows (one per episode)"],
      ["state-record writes per order", "6.00, the create included"],
      ["partner calls per order", "4.00"],
      ["SQLite rows written per order", "76.00"],
    ]);
  });

  it("give the Azure path's Cosmos DB requests by container and kind, the refused apart, with the RU estimate", () => {
    const byFigure = Object.fromEntries(workRows().map((r) => [r.figure.trim(), r.value]));
    expect(byFigure).toMatchObject({
      "Azure path (sas host), 100 orders: activities / timers / episodes per order": "5.00 / 4.00 / 6.00",
      // The Azure path's row, listed after the embedded host's of the same name.
      "durable history per order": "28.00 events, 7,027 bytes, in 6.00 rows (one per episode)",
      "state-record writes per order (successful writes to the state container)": "6.00",
      "Cosmos DB requests per order": "21.00, 202.0 RU (estimate)",
      "Cosmos DB, state container, order records, per order":
        "read 1.00, create 1.00, replace 5.00, query 1.50; refused: replace 412 0.10; 72.6 RU (estimate)",
      "Cosmos DB, state container, circuit breakers, per order": "refused: read 404 2.00; 2.0 RU (estimate)",
      "Cosmos DB, recovery index, per order":
        "create 1.00, replace 7.00, delete 1.00; refused: read 404 1.00; 127.0 RU (estimate)",
      "Cosmos DB, leases container, per order": "read 0.37; 0.4 RU (estimate)",
      "Cosmos DB document bytes written per order": "records 12,500, recovery 600",
      "Service Bus operations per order":
        "6.00: orders send 1.00, receive 1.00, complete 1.00; order-status send 3.00",
      "partner calls per order": "4.00",
      "the run":
        "every order final in 12.5 s (98 Processed, 2 Compensated); the stand-ins run in the bench's process",
    });
  });

  it("say what was not counted rather than a figure of nothing", () => {
    const uncounted: WorkResult = {
      ...work,
      embedded: { ...work.embedded, durable: { ...work.embedded.durable, stateWrites: null } },
      azure: { ...azure, serviceBus: null, durable: null, partnerCalls: null },
    };
    const { rows } = report({ work: ok(uncounted) }, { ...DEFAULTS, only: ["work"] });
    const values = rows.map((r) => r.value);
    expect(values).toContain("not counted: no audit table");
    expect(values).toContain("not counted: no durable store read");
    expect(values.filter((v) => v === "not counted")).toHaveLength(2);
    expect(
      rows.some(
        (r) => r.figure.trim() === "durable history per order" && r.durability.startsWith("sas host"),
      ),
    ).toBe(false);
  });

  it("show a failed work run as failed, and judge no floor of its own", () => {
    const runs: Runs = { work: { ok: false, error: "exit 1: sas host did not start in time", seconds: 130 } };
    const options = parseBenchOptions(["--only", "work", "--azure-orders", "300"]);
    const { rows, summary } = report(runs, options);
    expect(rows).toEqual([
      expect.objectContaining({
        yardstick: "work",
        figure: "work per order (5,000 orders embedded, 300 on the Azure path): run failed",
        verdict: "failed",
      }),
    ]);
    expect(summary.exitCode).toBe(1);
    const passed = report(passing(), { ...DEFAULTS, only: ["work"] });
    expect(passed.rows.every((r) => r.floor === "" && r.verdict === "")).toBe(true);
    expect(passed.summary.exitCode).toBe(0);
  });

  it("put the capacity and cost table in the page, from the Azure path's figures per 1,000 orders", () => {
    const { rows, summary } = report(passing());
    const page = renderPage(CONTEXT, DEFAULTS, rows, summary, passing());
    expect(page).toContain("## Capacity and cost in Azure");
    for (const line of [
      "| orders per second per 1,000 RU/s provisioned (estimate) | 5.0 |",
      "| Cosmos DB requests per 1,000 orders | 21,000 |",
      "| Cosmos DB request units per 1,000 orders (estimate) | 202,000 |",
      "| Service Bus operations per 1,000 orders | 6,000 |",
      "| durable history events per 1,000 orders | 28,000 |",
      "| orchestration episodes / activities / timers per 1,000 orders | 6,000 / 5,000 / 4,000 |",
      "| partner calls per 1,000 orders | 4,000 |",
    ]) {
      expect(page).toContain(line);
    }
    expect(page.indexOf("## Capacity and cost in Azure")).toBeLessThan(
      page.indexOf("## What each figure is"),
    );
    expect(renderPage(CONTEXT, DEFAULTS, rows, summary, {})).not.toContain("## Capacity and cost in Azure");
  });
});

describe("a yardstick's child process, as npm run bench reads its end", () => {
  const ended = (over: Partial<ChildExit>): ChildExit => ({
    stdout: "",
    stderr: "",
    code: 0,
    signal: null,
    timedOut: false,
    ...over,
  });
  const plan = { timeoutSeconds: 60 };

  it("succeeds with exit 0 and its last line of stdout as JSON", () => {
    const outcome = outcomeOf(ended({ stdout: 'progress\n{"ratio":1.2}\n' }), 4, plan);
    expect(outcome).toEqual({ ok: true, value: { ratio: 1.2 }, seconds: 4 });
  });

  it("fails with exit 0 but no JSON result", () => {
    expect(outcomeOf(ended({ stdout: "done\n" }), 1, plan)).toEqual({
      ok: false,
      error: "exit 0: printed no JSON result",
      seconds: 1,
    });
  });

  it("fails on a non-zero exit even with a result, with the demo's own reason", () => {
    const summary = JSON.stringify({
      invariants: { ok: false, violations: ["ord-1: effect applied twice"] },
      orders: { Pending: 2, Processing: 1, Compensating: 0 },
    });
    const outcome = outcomeOf(ended({ stdout: summary, code: 1 }), 9, { ...plan, explain: explainDemo });
    expect(outcome).toEqual({
      ok: false,
      error: "exit 1: invariants broken: ord-1: effect applied twice; 3 orders unsettled at the timeout",
      seconds: 9,
    });
  });

  it("gives the error line of a crash rather than its stack, and says when it was stopped for time", () => {
    const stderr =
      "open loop: 200 orders/s for 20 s\nError: the host did not serve within 60 s\n    at startHost (x.ts:1:1)\n";
    expect(outcomeOf(ended({ stderr, code: 1 }), 61, plan)).toMatchObject({
      ok: false,
      error: "exit 1: Error: the host did not serve within 60 s",
    });
    expect(outcomeOf(ended({ code: null, signal: "SIGKILL", timedOut: true }), 60, plan)).toMatchObject({
      ok: false,
      error: "stopped after its limit of 60 s",
    });
    expect(outcomeOf(ended({ code: null, signal: "SIGSEGV" }), 2, plan)).toMatchObject({
      error: "exit SIGSEGV: printed no JSON result",
    });
  });
});

describe("demos side by side", () => {
  it("count every order over the span from the first start to the last end, so a late start lowers the rate", () => {
    const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1) + seconds * 1_000).toISOString();
    expect(
      combinedRate(1_000, [
        { from: at(0), to: at(2) },
        { from: at(0), to: at(2) },
      ]),
    ).toBe(1_000);
    expect(
      combinedRate(1_000, [
        { from: at(0), to: at(2) },
        { from: at(1), to: at(4) },
      ]),
    ).toBe(500);
  });
});
