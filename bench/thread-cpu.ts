/**
 * Where a process's CPU went, by thread, read from Linux's `/proc/<pid>/task/<tid>/stat` while it runs:
 * the main thread; the threads started with the process (V8's helpers, which run parallel scavenges,
 * concurrent marking and optimizing compiles, and the module loader's); and the threads started later
 * (in the demo, its worker threads: the simulated partner's, and on disk the checkpoints'), told apart
 * by how many threads a process of the same command has when its own code starts. Over the
 * whole run, start-up included, each thread as last seen (at most one interval before it or the process
 * ended); or over a window of it, such as the demo's measured seconds, each thread's CPU interpolated
 * between the readings around the window's ends. Elsewhere than Linux there is no `/proc`, and nothing
 * is read.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Linux reports thread times in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * Without a count of the threads a process has when its own code starts (`threadsAtStartup`), a thread
 * started within this many ticks of the main thread counts as started with the process: V8's helpers
 * start with the main thread, the module loader's soon after, and the demo's workers only once the
 * app's modules are loaded. A guess, which a fast start defeats: the count is what the comparison uses.
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

/**
 * The threads split into their groups; `threads` holds each thread's reading, the main one's under
 * `pid`. With `withProcess`, the number of threads a process of the same command has when its own
 * code starts (the main one included), the first that many by start are the ones started with the
 * process, and any later one is the program's own; without it, a guess by start time.
 */
export function splitThreads(
  pid: number,
  threads: ReadonlyMap<number, ThreadStat>,
  withProcess?: number,
): ThreadCpu | undefined {
  const main = threads.get(pid);
  if (!main) return undefined;
  // By start, then by thread id: ids grow as threads are made, and many start within one tick.
  const others = [...threads]
    .filter(([tid]) => tid !== pid)
    .sort(([a, x], [b, y]) => x.startTicks - y.startTicks || a - b);
  let startedWithProcess = 0;
  let startedLater = 0;
  others.forEach(([, thread], rank) => {
    const early =
      withProcess === undefined
        ? thread.startTicks - main.startTicks <= STARTED_WITH_PROCESS_TICKS
        : rank < withProcess - 1;
    if (early) startedWithProcess += thread.cpuTicks;
    else startedLater += thread.cpuTicks;
  });
  return {
    mainSeconds: main.cpuTicks / TICKS_PER_SECOND,
    startedWithProcessSeconds: startedWithProcess / TICKS_PER_SECOND,
    startedLaterSeconds: startedLater / TICKS_PER_SECOND,
  };
}

/**
 * How many threads a process started as `node <nodeArgs>` in `cwd` has once its own code runs (the
 * main one included), read by starting one that only counts them; undefined where there is no `/proc`.
 */
export function threadsAtStartup(nodeArgs: readonly string[], cwd: string): number | undefined {
  const count = 'import { readdirSync } from "node:fs"; console.log(readdirSync("/proc/self/task").length);';
  const probe = spawnSync(process.execPath, [...nodeArgs, "--input-type=module", "--eval", count], {
    cwd,
    encoding: "utf8",
  });
  const threads = Number(probe.stdout.trim());
  return probe.status === 0 && Number.isSafeInteger(threads) && threads > 0 ? threads : undefined;
}

/** A thread's CPU so far, in ticks, read at a wall-clock instant (ms since the epoch). */
export interface ThreadReading {
  readonly atMs: number;
  readonly cpuTicks: number;
}

/** Every reading of one thread, oldest first; `seenFromStart` if it was there at the first reading. */
export interface ThreadTrack {
  readonly startTicks: number;
  readonly seenFromStart: boolean;
  readonly readings: readonly ThreadReading[];
}

/**
 * A thread's CPU at `atMs`, in ticks, interpolated between the readings around it: its first reading
 * before them (0 for a thread first seen after the watch began: it started in between), its last
 * after them.
 */
export function cpuTicksAt(track: ThreadTrack, atMs: number): number {
  const [first, ...rest] = track.readings;
  if (!first) return 0;
  if (atMs <= first.atMs) return track.seenFromStart ? first.cpuTicks : 0;
  let before = first;
  for (const after of rest) {
    if (atMs <= after.atMs) {
      const share = (atMs - before.atMs) / (after.atMs - before.atMs);
      return before.cpuTicks + share * (after.cpuTicks - before.cpuTicks);
    }
    before = after;
  }
  return before.cpuTicks;
}

/** The split of the CPU each thread used between two instants (ms since the epoch). */
export function splitWithin(
  pid: number,
  tracks: ReadonlyMap<number, ThreadTrack>,
  fromMs: number,
  toMs: number,
  withProcess?: number,
): ThreadCpu | undefined {
  const used = new Map<number, ThreadStat>();
  for (const [tid, track] of tracks) {
    const cpuTicks = Math.max(0, cpuTicksAt(track, toMs) - cpuTicksAt(track, fromMs));
    used.set(tid, { startTicks: track.startTicks, cpuTicks });
  }
  return splitThreads(pid, used, withProcess);
}

/** Each thread's start and its CPU at its last reading: what it had used since it started. */
function lastReadings(tracks: ReadonlyMap<number, ThreadTrack>): Map<number, ThreadStat> {
  const last = new Map<number, ThreadStat>();
  for (const [tid, { startTicks, readings }] of tracks) {
    last.set(tid, { startTicks, cpuTicks: readings[readings.length - 1]?.cpuTicks ?? 0 });
  }
  return last;
}

/** What a watch saw: the split over the whole run, and over any window of it. */
export interface ThreadWatch {
  readonly whole: ThreadCpu | undefined;
  within(fromMs: number, toMs: number): ThreadCpu | undefined;
}

/**
 * Reads the threads of `pid` every `intervalMs` until stopped, keeping every reading with its instant
 * (a thread that has ended keeps what it had used when last seen); `stop` answers what was seen,
 * or undefined where there is no `/proc`.
 */
export function watchThreads(
  pid: number,
  options: {
    readonly intervalMs?: number;
    readonly withProcess?: number | undefined;
    readonly now?: () => number;
  } = {},
): { stop(): ThreadWatch | undefined } {
  const { intervalMs = 50, withProcess, now = Date.now } = options;
  const tracks = new Map<number, ThreadTrack & { readings: ThreadReading[] }>();
  let firstPass = true;
  const read = () => {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return;
    }
    const atMs = now();
    for (const tid of tids) {
      try {
        const stat = parseThreadStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"));
        if (!stat) continue;
        let track = tracks.get(Number(tid));
        if (!track) {
          track = { startTicks: stat.startTicks, seenFromStart: firstPass, readings: [] };
          tracks.set(Number(tid), track);
        }
        track.readings.push({ atMs, cpuTicks: stat.cpuTicks });
      } catch {
        // The thread ended between the listing and the read: its last reading stands.
      }
    }
    firstPass = false;
  };
  read();
  const timer = setInterval(read, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      if (tracks.size === 0) return undefined;
      return {
        whole: splitThreads(pid, lastReadings(tracks), withProcess),
        within: (fromMs, toMs) => splitWithin(pid, tracks, fromMs, toMs, withProcess),
      };
    },
  };
}
