import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type CompareOptions,
  checkoutCli,
  parseCompareOptions,
  runSittings,
  storageKinds,
} from "../../bench/demo-compare.js";
import {
  type AzureWorkRead,
  alternate,
  azureFigures,
  azureKinds,
  type Build,
  compareSection,
  type DemoSummaryRead,
  demoFigures,
  demoSummaryFromOutput,
  judgeTargets,
  pairOrder,
  targetLines,
  windowThreadFigures,
} from "../../bench/demo-comparison.js";
import type { FigureComparison } from "../../bench/runtime-comparison.js";
import { UsageError } from "../../laptop/cli/usage-error.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A directory holding the given (empty) files and folders. */
function checkoutWith(...paths: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "demo-compare-"));
  dirs.push(dir);
  for (const path of paths) {
    if (path.endsWith("/")) mkdirSync(join(dir, path), { recursive: true });
    else {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), "");
    }
  }
  return dir;
}

function usageError(args: string[]): string {
  try {
    parseCompareOptions(args);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`no usage error for ${args.join(" ")}`);
}

describe("bench:compare flags", () => {
  it("takes the defaults, and --orders for the Azure path unless told otherwise", () => {
    const base = checkoutWith("node_modules/", "laptop/cli/main.ts");
    expect(parseCompareOptions(["--base", base])).toEqual({
      base,
      orders: 5_000,
      pairs: 3,
      data: ["memory", "disk"],
      azure: false,
      azureOrders: 5_000,
      json: false,
    });
    const options = parseCompareOptions(["--base", base, "--orders", "300", "--azure", "--data", "disk"]);
    expect(options).toMatchObject({ orders: 300, azureOrders: 300, azure: true, data: ["disk"] });
    expect(parseCompareOptions(["--base", base, "--azure-orders", "50"]).azureOrders).toBe(50);
  });

  it("refuses a missing or unfit --base, naming what is missing", () => {
    expect(usageError([])).toMatch(/--base is required/);
    expect(usageError(["--base", join(tmpdir(), "no-such-checkout-here")])).toMatch(/no such directory/);
    expect(usageError(["--base", checkoutWith("laptop/cli/main.ts")])).toMatch(/no node_modules/);
    expect(usageError(["--base", checkoutWith("node_modules/")])).toMatch(
      /no demo command there \(neither laptop\/cli\/main\.ts nor src\/local\/cli\.ts\)/,
    );
  });

  it("refuses bad numbers, unknown flags and positionals", () => {
    const base = checkoutWith("node_modules/", "src/local/cli.ts");
    expect(usageError(["--base", base, "--pairs", "0"])).toMatch(
      /--pairs 0: must be an integer from 1 to 100/,
    );
    expect(usageError(["--base", base, "--orders", "1.5"])).toMatch(/--orders 1.5/);
    expect(usageError(["--base", base, "--azure-orders", "-3"])).toMatch(/--azure-orders/);
    expect(usageError(["--base", base, "--floors"])).toMatch(/floors/);
    expect(usageError(["--base", base, "extra"])).toMatch(/extra/);
  });

  it("reads --data as distinct kinds in the order given", () => {
    expect(storageKinds("disk, memory")).toEqual(["disk", "memory"]);
    expect(() => storageKinds("memory,ssd")).toThrow(/each must be memory or disk/);
    expect(() => storageKinds("disk,disk")).toThrow(/given twice/);
    expect(() => storageKinds("")).toThrow(UsageError);
  });

  it("finds the command line in either layout, this one first", () => {
    expect(checkoutCli(checkoutWith("src/local/cli.ts"))).toMatch(/src\/local\/cli\.ts$/);
    expect(checkoutCli(checkoutWith("laptop/cli/main.ts", "src/local/cli.ts"))).toMatch(
      /laptop\/cli\/main\.ts$/,
    );
    expect(checkoutCli(checkoutWith("src/"))).toBeUndefined();
  });
});

describe("alternated pairs", () => {
  it("runs base, this, this, base, base, this", async () => {
    const calls: Build[] = [];
    const sitting = await alternate(3, (build) => {
      calls.push(build);
      return calls.length;
    });
    expect(calls).toEqual(["base", "head", "head", "base", "base", "head"]);
    expect(pairOrder(0)).toEqual(["base", "head"]);
    // The i-th runs of each build make the i-th pair, whichever went first.
    expect(sitting).toEqual({ base: [1, 4, 5], head: [2, 3, 6] });
  });

  it("ends the sitting at a failed run and drops the pair it left half made", async () => {
    let made = 0;
    const sitting = await alternate(3, async () => {
      if (++made === 4) throw new Error("the demo exited 1");
      return made;
    });
    expect(sitting.base).toEqual([1]);
    expect(sitting.head).toEqual([2]);
    expect(sitting.failure?.message).toBe("the demo exited 1");
  });
});

const summary = (msPerOrder: number, calls = 400): DemoSummaryRead => ({
  orders: { submitted: 100 },
  partner: { calls },
  throughput: { ordersPerSecond: 250 },
  cpu: { msPerOrder },
  storage: { rowsWritten: 7_600 },
});

const work = (episodes: number, stateWrites: number | null = 700) => ({
  orders: 100,
  instances: 100,
  episodes,
  historyEvents: episodes * 4,
  historyBytes: 888_200,
  activities: 900,
  timers: 400,
  stateWrites,
});

describe("a run's figures", () => {
  it("reads a demo's summary from its last line, and nothing from other output", () => {
    const line = JSON.stringify({ ...summary(4), invariants: { ok: true } });
    expect(demoSummaryFromOutput(`warming up\n${line}\n`)).toMatchObject({ cpu: { msPerOrder: 4 } });
    expect(demoSummaryFromOutput("done\n")).toBeUndefined();
    expect(demoSummaryFromOutput('{"orders":{"submitted":1}}')).toBeUndefined();
    expect(demoSummaryFromOutput("{not json")).toBeUndefined();
  });

  it("gives CPU and rate as printed, and the counts per order", () => {
    expect(demoFigures("memory", summary(4), null)).toEqual({
      "memory, CPU ms per order": 4,
      "memory, orders/s": 250,
      "memory, partner calls per order": 4,
      "memory, rows written per order": 76,
    });
    expect(demoFigures("disk", summary(4), work(1_000))).toMatchObject({
      "disk, CPU ms per order": 4,
      "disk, orchestrations per order": 1,
      "disk, episodes per order": 10,
      "disk, history events per order": 40,
      "disk, history bytes per order": 8_882,
      "disk, activities per order": 9,
      "disk, timers per order": 4,
      "disk, state-record writes per order": 7,
    });
  });

  it("gives the CPU by thread over the measured seconds per order, and the process without its workers", () => {
    const threads = { mainSeconds: 6, startedWithProcessSeconds: 2, startedLaterSeconds: 1.5 };
    expect(windowThreadFigures("memory", threads, 4_000)).toEqual({
      "memory, CPU ms per order, main thread": 1.5,
      "memory, CPU ms per order, V8 and loader threads": 0.5,
      "memory, CPU ms per order, worker threads": 0.375,
      "memory, CPU ms per order, all but the workers": 2,
    });
  });

  it("counts a kind of request one build never makes as none on the Azure path", () => {
    const measured = (byKind: Record<string, number>, durable = work(600)): AzureWorkRead => ({
      orders: 100,
      seconds: 4,
      cosmos: { byKind, requests: 1_000, requestUnitsEstimate: 5_000 },
      serviceBus: { byKind: { send: 300 }, operations: 300 },
      durable,
      partnerCalls: 400,
    });
    const runs = [measured({ read: 600, replace: 400 }), measured({ read: 500, patch: 500 })];
    const kinds = azureKinds(runs);
    expect(kinds).toEqual({ cosmos: ["patch", "read", "replace"], serviceBus: ["send"] });
    expect(azureFigures(runs[1] as AzureWorkRead, kinds)).toMatchObject({
      "azure, orders/s": 25,
      "azure, Cosmos requests per order": 10,
      "azure, Cosmos RU estimate per order": 50,
      "azure, Cosmos replace per order": 0,
      "azure, Cosmos patch per order": 5,
      "azure, Service Bus operations per order": 3,
      "azure, partner calls per order": 4,
      "azure, episodes per order": 6,
      "azure, history events per order": 24,
    });
    const noBus = azureFigures(
      { ...measured({}), serviceBus: null, durable: null, partnerCalls: null },
      kinds,
    );
    expect(Object.keys(noBus)).toEqual([
      "azure, orders/s",
      "azure, Cosmos requests per order",
      "azure, Cosmos RU estimate per order",
      "azure, Cosmos patch per order",
      "azure, Cosmos read per order",
      "azure, Cosmos replace per order",
    ]);
  });
});

describe("the comparison", () => {
  it("takes each build's median and the median of the pair ratios", () => {
    // The machine slows over the sitting; this build costs 0.5 of the base's CPU in every pair.
    const base = [5, 8, 6].map((ms) => demoFigures("disk", summary(ms), work(1_000)));
    const head = [2.5, 4, 3].map((ms, i) => demoFigures("disk", summary(ms), work(i === 1 ? 500 : 600)));
    const { rows, notCompared } = compareSection(base, head);
    const row = (figure: string) => rows.find((r) => r.figure === figure);
    expect(row("disk, CPU ms per order")).toMatchObject({
      baseMedian: 6,
      headMedian: 3,
      medianPairRatio: 0.5,
      headHigherIn: 0,
      pairs: 3,
    });
    expect(row("disk, episodes per order")).toMatchObject({
      baseMedian: 10,
      headMedian: 6,
      medianPairRatio: 0.6,
    });
    expect(notCompared).toEqual([]);
  });

  it("leaves out, and names, a figure that not every run has", () => {
    const base = [demoFigures("disk", summary(4), work(1_000, null))];
    const head = [demoFigures("disk", summary(2), work(600))];
    const { rows, notCompared } = compareSection(base, head);
    expect(notCompared).toEqual(["disk, state-record writes per order"]);
    expect(rows.map((r) => r.figure)).not.toContain("disk, state-record writes per order");
  });

  it("marks each target met or missed by its median pair ratio, and skips a figure not compared", () => {
    const row = (figure: string, medianPairRatio: number): FigureComparison => ({
      figure,
      baseMedian: 1,
      headMedian: medianPairRatio,
      ratioOfMedians: medianPairRatio,
      medianPairRatio,
      headHigherIn: 0,
      pairs: 1,
    });
    const verdicts = judgeTargets([
      row("memory, CPU ms per order", 0.6),
      row("disk, CPU ms per order", 0.66),
      row("disk, history events per order", 0.5),
    ]);
    expect(verdicts.map((v) => [v.figure, v.met])).toEqual([
      ["memory, CPU ms per order", true],
      ["disk, CPU ms per order", false],
      ["disk, history events per order", true],
    ]);
    expect(targetLines(verdicts)).toEqual([
      "memory, CPU ms per order                   median pair ratio 0.600  target <= 0.60  met",
      "disk, CPU ms per order                     median pair ratio 0.660  target <= 0.65  missed",
      "azure, Cosmos requests per order           not measured             target <= 0.60",
      "disk, history events per order             median pair ratio 0.500  target <= 0.60  met",
      "azure, history events per order            not measured             target <= 0.60",
    ]);
  });
});

describe("a sitting", () => {
  // Each pair made is reported on stderr.
  beforeEach(() => void vi.spyOn(console, "error").mockImplementation(() => {}));
  afterEach(() => vi.restoreAllMocks());
  const options = (data: CompareOptions["data"], azure: boolean): CompareOptions => ({
    base: "/base",
    orders: 40,
    pairs: 2,
    data,
    azure,
    azureOrders: 20,
    json: true,
  });
  const measured = (requests: number): AzureWorkRead => ({
    orders: 20,
    seconds: 2,
    cosmos: { byKind: { read: requests }, requests, requestUnitsEstimate: requests * 2 },
    serviceBus: null,
    durable: null,
    partnerCalls: 80,
  });

  it("runs each kind's pairs, alternated, in its checkout, then the Azure path's", async () => {
    const calls: string[] = [];
    const sittings = await runSittings(
      options(["memory", "disk"], true),
      async ({ checkout, orders }) => {
        calls.push(`azure ${checkout === "/base" ? "base" : "head"} ${orders}`);
        return measured(checkout === "/base" ? 200 : 100);
      },
      (checkout, kind, orders) => {
        calls.push(`${kind} ${checkout === "/base" ? "base" : "head"} ${orders}`);
        return demoFigures(kind, summary(checkout === "/base" ? 4 : 2), null);
      },
    );
    expect(calls).toEqual([
      ...["memory base 40", "memory head 40", "memory head 40", "memory base 40"],
      ...["disk base 40", "disk head 40", "disk head 40", "disk base 40"],
      ...["azure base 20", "azure head 20", "azure head 20", "azure base 20"],
    ]);
    expect(sittings.failure).toBeUndefined();
    expect(sittings.sections.map((s) => s.section)).toEqual(["memory", "disk", "azure"]);
    const azure = sittings.sections[2];
    expect(azure?.base[0]).toMatchObject({ "azure, Cosmos requests per order": 10 });
    expect(azure?.head[1]).toMatchObject({ "azure, Cosmos read per order": 5 });
    expect(azure?.measured?.base).toHaveLength(2);
  });

  it("stops at a failed run, keeping the sections made before it", async () => {
    let runs = 0;
    const sittings = await runSittings(options(["memory", "disk"], false), undefined, (_, kind) => {
      if (kind === "disk" && ++runs === 2) throw new Error("the demo exited 1");
      return demoFigures(kind, summary(3), null);
    });
    expect(sittings.failure?.message).toBe("the demo exited 1");
    expect(sittings.sections.map((s) => [s.section, s.base.length, s.head.length])).toEqual([
      ["memory", 2, 2],
      ["disk", 0, 0],
    ]);
  });
});

describe("bench:compare, run", () => {
  it("compares this build with itself on disk: the same work per order, ratio 1", () => {
    const child = spawnSync(
      process.execPath,
      ["--import", "tsx", "bench/demo-compare.ts", "--base", ROOT, "--orders", "30", "--pairs", "1"].concat([
        "--data",
        "disk",
        "--json",
      ]),
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(child.status, child.stderr).toBe(0);
    const printed = JSON.parse(child.stdout) as {
      rows: FigureComparison[];
      targets: { figure: string }[];
      runs: Record<string, { base: unknown[]; head: unknown[] }>;
    };
    const row = (figure: string) => printed.rows.find((r) => r.figure === figure);
    for (const figure of [
      "disk, episodes per order",
      "disk, activities per order",
      "disk, partner calls per order",
    ]) {
      expect(row(figure)?.medianPairRatio, figure).toBe(1);
    }
    expect(row("disk, CPU ms per order")?.baseMedian).toBeGreaterThan(0);
    if (existsSync("/proc/self/task")) {
      // The threads over the measured seconds add up to about the demo's own figure.
      const mainThread = row("disk, CPU ms per order, main thread")?.baseMedian ?? 0;
      expect(mainThread).toBeGreaterThan(0);
      expect(mainThread).toBeLessThan((row("disk, CPU ms per order")?.baseMedian ?? 0) * 1.5);
    }
    expect(printed.runs.disk?.base).toHaveLength(1);
    expect(printed.targets.map((t) => t.figure)).toEqual([
      "disk, CPU ms per order",
      "disk, history events per order",
    ]);
  }, 60_000);
});
