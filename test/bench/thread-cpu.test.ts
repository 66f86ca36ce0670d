import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseThreadStat, splitThreads, type ThreadStat, watchThreads } from "../../bench/thread-cpu.js";

/** A `/proc/<pid>/task/<tid>/stat` line with the given name, CPU ticks and start (ticks since boot). */
function statLine(name: string, utime: number, stime: number, start: number): string {
  const fields = ["S", "1", "1", "1", "0", "-1", "4194304", "10", "0", "0", "0", utime, stime];
  const rest = ["0", "0", "20", "0", "2", "0", start, "1000", "100"];
  return `4242 (${name}) ${[...fields, ...rest].join(" ")}\n`;
}

describe("parseThreadStat", () => {
  it("reads the CPU and the start after a name that holds spaces and parentheses", () => {
    expect(parseThreadStat(statLine("node", 120, 30, 5000))).toEqual({ startTicks: 5000, cpuTicks: 150 });
    expect(parseThreadStat(statLine("a) (b c", 7, 3, 9))).toEqual({ startTicks: 9, cpuTicks: 10 });
  });

  it("refuses a line that is not a stat line", () => {
    expect(parseThreadStat("")).toBeUndefined();
    expect(parseThreadStat("4242 (node) S 1 2")).toBeUndefined();
  });
});

describe("splitThreads", () => {
  const thread = (startTicks: number, cpuTicks: number): ThreadStat => ({ startTicks, cpuTicks });

  it("tells the threads started with the process from those started later", () => {
    const threads = new Map([
      [100, thread(1_000, 900)],
      [101, thread(1_000, 80)],
      [102, thread(1_020, 70)],
      [115, thread(1_050, 25)],
      [190, thread(1_120, 170)],
      [191, thread(1_125, 8)],
      [192, thread(1_300, 2)],
    ]);
    expect(splitThreads(100, threads)).toEqual({
      mainSeconds: 9,
      startedWithProcessSeconds: 1.75,
      startedLaterSeconds: 1.8,
    });
  });

  it("gives nothing without the main thread, and zeros when no thread started later", () => {
    expect(splitThreads(100, new Map([[101, thread(1, 1)]]))).toBeUndefined();
    expect(splitThreads(100, new Map([[100, thread(1, 50)]]))).toEqual({
      mainSeconds: 0.5,
      startedWithProcessSeconds: 0,
      startedLaterSeconds: 0,
    });
  });
});

describe.runIf(existsSync("/proc/self/task"))("watchThreads", () => {
  it("reads a live process's threads, its main thread's CPU included", () => {
    const split = watchThreads(process.pid, 10_000).stop();
    expect(split).toBeDefined();
    expect(split?.mainSeconds).toBeGreaterThan(0);
  });
});
