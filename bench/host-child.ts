/**
 * A checkout's `sas host` (and `sas send`) run from a built app's folder in a child process, as a user
 * runs them: the CLI from the checkout's source under tsx, the settings from the folder's
 * local.settings.json.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { join } from "node:path";
import type { CheckoutLayout } from "./checkout-app.js";

export interface HostChild {
  /** The functions' base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The `sas host` process's id; the extension host it starts is its child. */
  readonly pid: number | undefined;
  /** The last of what it wrote, for a failure's report. */
  output(): string;
  /** SIGTERM, as Ctrl+C stops it, then SIGKILL to its process group if it has not ended in 30 s. */
  stop(): Promise<number | null>;
}

const STOP_GRACE_MS = 30_000;

function cliArgs(checkout: string, layout: CheckoutLayout): string[] {
  return ["--import", "tsx", join(checkout, layout.cli)];
}

/** Starts `sas host` in `appRoot` and resolves once it says where its functions are. */
export function startHost(options: {
  readonly checkout: string;
  readonly layout: CheckoutLayout;
  readonly appRoot: string;
  readonly port: number;
  readonly data: string;
  readonly timeoutMs?: number;
}): Promise<HostChild> {
  const { checkout, layout, appRoot, port, data } = options;
  const args = [
    ...cliArgs(checkout, layout),
    "host",
    "--port",
    String(port),
    "--data",
    data,
    ...layout.hostFlags,
  ];
  // Its own process group, so that a host that will not stop is ended with Azurite, its child.
  const child = spawn(process.execPath, args, {
    cwd: appRoot,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      killGroup(child);
      reject(new Error(`sas host ${why}\n${output.slice(-4_000)}`));
    };
    const timer = setTimeout(() => fail("did not start in time"), options.timeoutMs ?? 120_000);
    void exited.then((code) => fail(`exited with ${code} before it was ready`));
    const watch = () => {
      const ready = /sas host: functions on (\S+)\/api/.exec(output);
      if (!ready?.[1]) return;
      clearTimeout(timer);
      child.stdout.off("data", watch);
      resolve({ url: ready[1], pid: child.pid, output: () => output, stop: () => stopHost(child, exited) });
    };
    child.stdout.on("data", watch);
  });
}

async function stopHost(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  const stuck = setTimeout(() => killGroup(child), STOP_GRACE_MS);
  const code = await exited;
  clearTimeout(stuck);
  return code;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** `sas send --count <orders> --seed <seed>` from `appRoot`: the orders it put on the orders queue. */
export function sendOrders(options: {
  readonly checkout: string;
  readonly layout: CheckoutLayout;
  readonly appRoot: string;
  readonly orders: number;
  readonly seed: number;
}): Promise<number> {
  const { checkout, layout, appRoot } = options;
  const args = [
    ...cliArgs(checkout, layout),
    "send",
    "--count",
    String(options.orders),
    "--seed",
    String(options.seed),
  ];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: appRoot, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`sas send failed: ${stderr.trim() || error.message}`));
      const last = stdout.trim().split("\n").pop() ?? "";
      resolve((JSON.parse(last) as { sent: number }).sent);
    });
  });
}
