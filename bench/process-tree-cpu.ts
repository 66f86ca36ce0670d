/**
 * CPU time of other processes, read from Linux's /proc: a process and all its descendants (`sas host`
 * with the .NET extension host it starts), each by its name, user and system time together. A process
 * that ended between two readings is missing from the later one, so a difference covers the processes
 * that lived through the whole span; the long-lived ones here do. Elsewhere than Linux, nothing is read.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks a second, as `getconf CLK_TCK` says on every Linux the bench runs on. */
const TICKS_PER_SECOND = 100;

export interface ProcessCpu {
  readonly pid: number;
  /** The program's name (`comm`): node, dotnet, the extension host's own. */
  readonly name: string;
  readonly ms: number;
}

interface Stat {
  readonly pid: number;
  readonly ppid: number;
  readonly name: string;
  readonly ms: number;
}

/** One process's stat line: `pid (comm) state ppid ... utime stime` (fields 14 and 15). */
export function parseStat(line: string): Stat | undefined {
  const open = line.indexOf("(");
  const closeAt = line.lastIndexOf(")");
  if (open < 0 || closeAt < open) return undefined;
  const rest = line
    .slice(closeAt + 2)
    .trim()
    .split(/\s+/);
  const ticks = Number(rest[11]) + Number(rest[12]);
  if (!Number.isFinite(ticks)) return undefined;
  return {
    pid: Number(line.slice(0, open).trim()),
    ppid: Number(rest[1]),
    name: line.slice(open + 1, closeAt),
    ms: (ticks * 1_000) / TICKS_PER_SECOND,
  };
}

function allStats(): Stat[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  const stats: Stat[] = [];
  for (const entry of entries) {
    try {
      const stat = parseStat(readFileSync(`/proc/${entry}/stat`, "utf8"));
      if (stat) stats.push(stat);
    } catch {
      // ended while being read
    }
  }
  return stats;
}

/** `root` and every process descended from it, now. */
export function treeCpu(root: number): ProcessCpu[] {
  const stats = allStats();
  const inTree = new Set([root]);
  for (let grown = true; grown; ) {
    grown = false;
    for (const stat of stats) {
      if (!inTree.has(stat.pid) && inTree.has(stat.ppid)) {
        inTree.add(stat.pid);
        grown = true;
      }
    }
  }
  return stats.filter((s) => inTree.has(s.pid)).map(({ pid, name, ms }) => ({ pid, name, ms }));
}

/** What each process of `after` spent since `before` (a process new since then: all of its time). */
export function cpuSince(before: readonly ProcessCpu[], after: readonly ProcessCpu[]): ProcessCpu[] {
  const earlier = new Map(before.map((p) => [p.pid, p.ms]));
  return after.map((p) => ({ ...p, ms: p.ms - (earlier.get(p.pid) ?? 0) }));
}

/** Children of this process whose command line contains `marker` (Azurite, started by the bench). */
export function childrenMatching(marker: string): number[] {
  return allStats()
    .filter((s) => s.ppid === process.pid)
    .filter((s) => {
      try {
        return readFileSync(`/proc/${s.pid}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    })
    .map((s) => s.pid);
}
