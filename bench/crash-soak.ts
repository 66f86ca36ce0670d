// npm run soak:crash [-- --orders N --kills K --seed S --permanent-faults R]
// Kills the embedded host (`sas start`) with SIGKILL again and again while orders are in flight, with
// transient faults, slow answers, lost and duplicate replies (and, if asked, permanent faults), then
// lets a last host drain the batch and reports where every order ended and how long the last host
// took to settle them. Without permanent faults, exit 0 only when every order is Processed: crashes
// and transient faults alone must never leave work for an operator; with them, when every order is final.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { demoOrder } from "../laptop/embedded/demo.js";
import { seededRandom } from "../src/domain/backoff.js";

const USAGE =
  "usage: npm run soak:crash -- [--orders <n>] [--kills <n>] [--seed <n>] [--drain-seconds <n>]\n" +
  "                              [--permanent-faults <rate>]\n" +
  "  orders 1 to 100000 (default 600), kills 0 to 1000 (default 10), seed an integer (default 11),\n" +
  "  drain-seconds 10 to 3600 (default 600), permanent-faults 0 to 0.5 (default 0)";

interface Options {
  readonly orders: number;
  readonly kills: number;
  readonly seed: number;
  readonly drainSeconds: number;
  readonly permanentFaults: number;
}

function options(): Options {
  try {
    const { values } = parseArgs({
      options: {
        orders: { type: "string", default: "600" },
        kills: { type: "string", default: "10" },
        seed: { type: "string", default: "11" },
        "drain-seconds": { type: "string", default: "600" },
        "permanent-faults": { type: "string", default: "0" },
      },
      strict: true,
    });
    const int = (name: string, raw: string | undefined, min: number, max: number) => {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < min || n > max)
        throw new Error(`--${name} must be an integer from ${min} to ${max}`);
      return n;
    };
    return {
      orders: int("orders", values.orders, 1, 100_000),
      kills: int("kills", values.kills, 0, 1_000),
      seed: int("seed", values.seed, -(2 ** 31), 2 ** 31 - 1),
      drainSeconds: int("drain-seconds", values["drain-seconds"], 10, 3_600),
      permanentFaults: rate(values["permanent-faults"]),
    };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

function rate(raw: string | undefined): number {
  const n = Number(raw);
  if (raw === undefined || raw.trim() === "" || !Number.isFinite(n) || n < 0 || n > 0.5)
    throw new Error(`--permanent-faults must be a number from 0 to 0.5; got ${raw}`);
  return n;
}

const PORT = 7381;
const BASE = `http://127.0.0.1:${PORT}`;
const TERMINAL = ["Processed", "Error", "Compensated", "CompensationFailed"];

function startHost(dataDir: string, seed: number, permanentFaults: number): ChildProcess {
  const args = [
    "--import",
    "tsx",
    "laptop/cli/main.ts",
    "start",
    ...[
      "--data",
      dataDir,
      "--port",
      String(PORT),
      "--demo-orders",
      "0",
      "--seed",
      String(seed),
      "--no-store",
    ],
    ...["--transient-faults", "0.2", "--slow", "0.05", "--lost-replies", "0.05"],
    ...["--duplicate-replies", "0.05", "--permanent-faults", String(permanentFaults)],
  ];
  // Its own process group, so SIGKILL reaches the host and nothing of it survives.
  return spawn(process.execPath, args, { stdio: "ignore", detached: true });
}

function kill(host: ChildProcess): void {
  if (host.pid !== undefined) process.kill(-host.pid, "SIGKILL");
}

async function waitUntilServing(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      await fetch(`${BASE}/api/orders/ping`);
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error("the host did not start serving within 60 s");
}

/** Posts the orders not yet accepted; stops quietly at the first refused connection (the host died). */
async function postOrders(pending: Map<string, unknown>): Promise<void> {
  for (const [orderId, message] of pending) {
    try {
      const answer = await fetch(`${BASE}/api/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(message),
      });
      if (answer.status === 202 || answer.status === 200) pending.delete(orderId);
    } catch {
      return;
    }
  }
}

async function stateOf(orderId: string): Promise<string> {
  const answer = await fetch(`${BASE}/api/orders/${orderId}`);
  if (answer.status !== 200) return `http-${answer.status}`;
  const body = (await answer.json()) as { processState?: string };
  return body.processState ?? "unknown";
}

async function main(): Promise<void> {
  const opts = options();
  const dataDir = mkdtempSync(join(tmpdir(), "sas-soak-"));
  const random = seededRandom(opts.seed);
  const pending = new Map<string, unknown>();
  for (let i = 0; i < opts.orders; i++) {
    const message = demoOrder("soak", i, random);
    pending.set(message.orderId, message);
  }
  const orderIds = [...pending.keys()];
  const started = Date.now();
  try {
    for (let k = 0; k < opts.kills; k++) {
      const host = startHost(dataDir, opts.seed + k, opts.permanentFaults);
      await waitUntilServing();
      const posting = postOrders(pending);
      await sleep(1_000 + random() * 4_000);
      kill(host);
      await posting;
      console.log(JSON.stringify({ event: "killed", kill: k + 1, notYetAccepted: pending.size }));
    }
    const host = startHost(dataDir, opts.seed + opts.kills, opts.permanentFaults);
    const lastStart = Date.now();
    try {
      await waitUntilServing();
      await postOrders(pending);
      const counts = await drain(orderIds, opts.drainSeconds);
      const report = {
        orders: opts.orders,
        kills: opts.kills,
        seed: opts.seed,
        permanentFaults: opts.permanentFaults,
        counts,
        seconds: Math.round((Date.now() - started) / 1_000),
        secondsAfterLastRestart: Math.round((Date.now() - lastStart) / 1_000),
      };
      console.log(JSON.stringify(report));
      const final = TERMINAL.reduce((n, state) => n + (counts[state] ?? 0), 0);
      process.exitCode = (opts.permanentFaults === 0 ? counts.Processed : final) === opts.orders ? 0 : 1;
    } finally {
      kill(host);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Polls every order until all are terminal or the time is up; counts them by state. */
async function drain(orderIds: readonly string[], seconds: number): Promise<Record<string, number>> {
  const deadline = Date.now() + seconds * 1_000;
  for (;;) {
    const counts: Record<string, number> = {};
    for (const orderId of orderIds) {
      const state = await stateOf(orderId);
      counts[state] = (counts[state] ?? 0) + 1;
    }
    const settled = Object.entries(counts).every(([state]) => TERMINAL.includes(state));
    if (settled || Date.now() > deadline) return counts;
    await sleep(2_000);
  }
}

await main();
