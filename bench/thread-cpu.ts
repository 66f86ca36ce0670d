/**
 * Where a process's CPU went, by thread, read from Linux's `/proc/<pid>/task/<tid>/stat` while it runs:
 * the main thread; the threads started with the process (V8's helpers, which run parallel scavenges,
 * concurrent marking and optimizing compiles, and the module loader's); the busiest thread started
 * later (the simulated partner's worker in the demo); and the rest. Whole-process figures, start-up
 * included. Elsewhere than Linux there is no `/proc`, and nothing is read.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Linux reports thread times in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** A thread started within this many ticks of the main thread started with the process. */
const STARTED_WITH_PROCESS_TICKS = 50;

export interface ThreadStat {
  /** When the thread started, in ticks since boot. */
  readonly startTicks: number;
  /** User and system CPU so far, in ticks. */
  readonly cpuTicks: number;
}

export interface ThreadCpu {
  readonly mainSeconds: number;
  readonly startedWithProcessSeconds: number;
  readonly busiestLaterSeconds: number;
  readonly otherSeconds: number;
}

/** One `/proc/.../stat` line's start and CPU; undefined if it is not one. The name may hold spaces and ")". */
export function parseThreadStat(line: string): ThreadStat | undefined {
  const close = line.lastIndexOf(")");
  if (close < 0) return undefined;
  // The fields after the name, from the state (field 3): utime is field 14, stime 15, starttime 22.
  const fields = line
    .slice(close + 2)
    .trim()
    .split(" ");
  const [utime, stime, start] = [fields[11], fields[12], fields[19]].map(Number);
  if (![utime, stime, start].every((value) => Number.isSafeInteger(value))) return undefined;
  return { startTicks: start as number, cpuTicks: (utime as number) + (stime as number) };
}

/** The threads split into their groups; `threads` holds each thread's last reading, the main one's under `pid`. */
export function splitThreads(pid: number, threads: ReadonlyMap<number, ThreadStat>): ThreadCpu | undefined {
  const main = threads.get(pid);
  if (!main) return undefined;
  let startedWithProcess = 0;
  const later: number[] = [];
  for (const [tid, thread] of threads) {
    if (tid === pid) continue;
    if (thread.startTicks - main.startTicks <= STARTED_WITH_PROCESS_TICKS)
      startedWithProcess += thread.cpuTicks;
    else later.push(thread.cpuTicks);
  }
  const busiest = Math.max(0, ...later);
  const seconds = (ticks: number) => ticks / TICKS_PER_SECOND;
  return {
    mainSeconds: seconds(main.cpuTicks),
    startedWithProcessSeconds: seconds(startedWithProcess),
    busiestLaterSeconds: seconds(busiest),
    otherSeconds: seconds(later.reduce((sum, ticks) => sum + ticks, 0) - busiest),
  };
}

/**
 * Reads the threads of `pid` every `intervalMs` until stopped, keeping each one's last reading (a
 * thread that has ended keeps what it had used when last seen); `stop` answers the split, or undefined
 * where there is no `/proc`.
 */
export function watchThreads(pid: number, intervalMs = 200): { stop(): ThreadCpu | undefined } {
  const threads = new Map<number, ThreadStat>();
  const read = () => {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return;
    }
    for (const tid of tids) {
      try {
        const stat = parseThreadStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"));
        if (stat) threads.set(Number(tid), stat);
      } catch {
        // The thread ended between the listing and the read: its last reading stands.
      }
    }
  };
  read();
  const timer = setInterval(read, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return splitThreads(pid, threads);
    },
  };
}
