import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  cpuTicksAt,
  parseThreadStat,
  splitThreads,
  splitWithin,
  type ThreadStat,
  type ThreadTrack,
  threadsAtStartup,
  watchThreads,
} from "../../bench/thread-cpu.js";

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

  it("with a count of the threads at start-up, tells them apart by start order, however soon a worker started", () => {
    const threads = new Map([
      [100, thread(1_000, 900)],
      [103, thread(1_000, 60)],
      [101, thread(1_000, 40)],
      [102, thread(1_001, 0)],
      // The program's worker, 0.2 s after the process: a guess by time would count it as started with it.
      [110, thread(1_020, 170)],
      [111, thread(1_020, 30)],
    ]);
    expect(splitThreads(100, threads, 4)).toEqual({
      mainSeconds: 9,
      startedWithProcessSeconds: 1,
      startedLaterSeconds: 2,
    });
    expect(splitThreads(100, threads)?.startedLaterSeconds).toBe(0);
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

describe("cpuTicksAt", () => {
  const track = (seenFromStart: boolean): ThreadTrack => ({
    startTicks: 1_000,
    seenFromStart,
    readings: [
      { atMs: 1_000, cpuTicks: 10 },
      { atMs: 1_100, cpuTicks: 30 },
      { atMs: 1_300, cpuTicks: 40 },
    ],
  });

  it("interpolates between the readings around an instant", () => {
    expect(cpuTicksAt(track(true), 1_050)).toBe(20);
    expect(cpuTicksAt(track(true), 1_200)).toBe(35);
    expect(cpuTicksAt(track(true), 1_100)).toBe(30);
  });

  it("holds the first reading before them, or 0 for a thread that started after the watch, and the last after them", () => {
    expect(cpuTicksAt(track(true), 500)).toBe(10);
    expect(cpuTicksAt(track(false), 500)).toBe(0);
    expect(cpuTicksAt(track(true), 9_000)).toBe(40);
    expect(cpuTicksAt({ startTicks: 1, seenFromStart: true, readings: [] }, 1_000)).toBe(0);
  });
});

describe("splitWithin", () => {
  it("splits only the CPU used inside the window, by group", () => {
    const tracks = new Map<number, ThreadTrack>([
      [
        100,
        {
          startTicks: 1_000,
          seenFromStart: true,
          readings: [
            { atMs: 0, cpuTicks: 100 },
            { atMs: 1_000, cpuTicks: 300 },
            { atMs: 2_000, cpuTicks: 500 },
          ],
        },
      ],
      [101, { startTicks: 1_010, seenFromStart: true, readings: [{ atMs: 0, cpuTicks: 50 }] }],
      [
        190,
        {
          startTicks: 1_200,
          seenFromStart: false,
          readings: [
            { atMs: 1_000, cpuTicks: 0 },
            { atMs: 2_000, cpuTicks: 80 },
          ],
        },
      ],
    ]);
    // From 500 to 1500: the main thread 400 - 200, the helper nothing, the worker 40 - 0.
    expect(splitWithin(100, tracks, 500, 1_500)).toEqual({
      mainSeconds: 2,
      startedWithProcessSeconds: 0,
      startedLaterSeconds: 0.4,
    });
  });
});

describe.runIf(existsSync("/proc/self/task"))("threadsAtStartup", () => {
  it("counts a new process's threads when its code starts, and gives nothing when it cannot start", () => {
    const threads = threadsAtStartup([], process.cwd());
    expect(threads).toBeGreaterThanOrEqual(1);
    expect(threadsAtStartup(["--no-such-flag-at-all"], process.cwd())).toBeUndefined();
  });
});

describe.runIf(existsSync("/proc/self/task"))("watchThreads", () => {
  it("reads a live process's threads, its main thread's CPU included, and a window of it", async () => {
    const watch = watchThreads(process.pid, { intervalMs: 5 });
    const from = Date.now();
    // Spin until the process has had 200 ms of CPU (most of it this thread's), not for 150 ms of wall
    // time: on a loaded machine the thread gets only part of the wall time it spins for.
    const cpuAtStart = process.cpuUsage();
    const spent = () => {
      const used = process.cpuUsage(cpuAtStart);
      return (used.user + used.system) / 1_000;
    };
    while (spent() < 200 && Date.now() - from < 5_000) Math.sqrt(Math.random());
    const to = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const seen = watch.stop();
    expect(seen?.whole?.mainSeconds).toBeGreaterThan(0);
    const within = seen?.within(from, to);
    // About 200 ms of CPU spent spinning on the main thread: ticks of 10 ms, read every 5 ms.
    expect(within?.mainSeconds).toBeGreaterThan(0.05);
    expect(within?.mainSeconds).toBeLessThanOrEqual((seen?.whole?.mainSeconds ?? 0) + 1e-9);
  });
});
