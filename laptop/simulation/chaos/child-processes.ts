import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/** A `sas` command running in a child process of its own group, so a kill reaches all of it. */
export interface SasProcess {
  readonly pid: number;
  /** The URL it printed once it was serving. */
  readonly url: string;
  /** SIGKILL to the whole group: no shutdown code runs, as when a machine loses power or a worker is recycled. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Resident memory of the process, in bytes (0 where /proc cannot tell). */
  rss(): number;
  /** The last lines it wrote, for an error message. */
  output(): string;
}

/** How to run the CLI again in a child: cli.js as built, or cli.ts from source under tsx's loader. */
function cliCommand(): string[] {
  const self = fileURLToPath(import.meta.url);
  const cli = fileURLToPath(new URL(`../../cli/main${extname(self)}`, import.meta.url));
  return self.endsWith(".ts") ? ["--import", "tsx", cli] : [cli];
}

const live = new Set<SasProcess>();
let cleanupInstalled = false;

/**
 * Kills every child still running if this process exits first, so none outlives a failed run. The
 * children run in process groups of their own (so a kill reaches all of each), which also keeps a
 * Ctrl-C in the terminal from reaching them: on SIGINT or SIGTERM this process kills them and exits.
 */
function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  const killAll = () => {
    for (const child of live) killGroup(child.pid);
  };
  process.once("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * Starts `sas <args>` and resolves once a line of its output matches `ready` (its first group is
 * the URL), or rejects with its output when it exits first or `timeoutMs` passes.
 */
export async function startSas(
  args: readonly string[],
  ready: RegExp,
  options: { readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {},
): Promise<SasProcess> {
  installCleanup();
  const child = spawn(process.execPath, [...cliCommand(), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, ...options.env },
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await waitForUrl(child, ready, () => output, options.timeoutMs ?? 60_000);
  const pid = child.pid ?? 0;
  const handle: SasProcess = {
    pid,
    url,
    kill: async () => {
      killGroup(pid);
      await exited;
      live.delete(handle);
    },
    stop: async (graceMs = 15_000) => {
      child.kill("SIGTERM");
      const stopped = await Promise.race([exited.then(() => true), sleep(graceMs, false, { ref: false })]);
      if (!stopped) killGroup(pid);
      await exited;
      live.delete(handle);
    },
    rss: () => residentBytes(pid),
    output: () => output,
  };
  live.add(handle);
  return handle;
}

function waitForUrl(
  child: ChildProcess,
  ready: RegExp,
  output: () => string,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) killGroup(child.pid);
      reject(new Error(`not ready within ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    const check = () => {
      const url = ready.exec(output())?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      child.stdout?.off("data", check);
      resolve(url);
    };
    child.stdout?.on("data", check);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited (${signal ?? code}) before it was ready:\n${output()}`));
    });
  });
}

function residentBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb === undefined ? 0 : Number(kb) * 1_024;
  } catch {
    return 0;
  }
}

export const HOST_READY = /serving (http:\/\/[^\s:]+:\d+)/;
export const PARTNER_READY = /simulated partner on (http:\/\/[^\s;]+);/;
