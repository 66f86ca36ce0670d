/**
 * Where a process's CPU went, by thread, read from Linux's `/proc/<pid>/task/<tid>/stat` while it runs:
 * the main thread; the threads started with the process (V8's helpers, which run parallel scavenges,
 * concurrent marking and optimizing compiles, and the module loader's); and the threads started later
 * (in the demo, its worker threads: the simulated partner's, and on disk the checkpoints'). Whole-process
 * figures, start-up included; each thread as last seen, at most one interval before it or the process
 * ended. Elsewhere than Linux there is no `/proc`, and nothing is read.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Linux reports thread times in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * A thread started within this many ticks of the main thread started with the process: V8's helpers
 * start with the main thread, the module loader's within the first tenth of a second, and the demo's
 * workers only once the app's modules are loaded, a second or more later.
 */
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
  readonly startedLaterSeconds: number;
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
  const values = [fields[11], fields[12], fields[19]].map(Number);
  if (!values.every((value) => Number.isSafeInteger(value))) return undefined;
  const [utime = 0, stime = 0, start = 0] = values;
  return { startTicks: start, cpuTicks: utime + stime };
}

/** The threads split into their groups; `threads` holds each thread's last reading, the main one's under `pid`. */
export function splitThreads(pid: number, threads: ReadonlyMap<number, ThreadStat>): ThreadCpu | undefined {
  const main = threads.get(pid);
  if (!main) return undefined;
  let startedWithProcess = 0;
  let startedLater = 0;
  for (const [tid, thread] of threads) {
    if (tid === pid) continue;
    if (thread.startTicks - main.startTicks <= STARTED_WITH_PROCESS_TICKS)
      startedWithProcess += thread.cpuTicks;
    else startedLater += thread.cpuTicks;
  }
  return {
    mainSeconds: main.cpuTicks / TICKS_PER_SECOND,
    startedWithProcessSeconds: startedWithProcess / TICKS_PER_SECOND,
    startedLaterSeconds: startedLater / TICKS_PER_SECOND,
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
