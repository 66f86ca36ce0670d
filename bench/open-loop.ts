// tsx bench/open-loop.ts [--rates 100,200,400] [--seconds 20] [--warmup 5]   (npm run bench runs it)
// Open-loop latency of the embedded host. For each rate: a fresh `sas start` in a child process (data
// in a temporary directory, no demo batch, partner faults off), and this process sending orders to
// its POST /api/orders on a fixed schedule, order i at t0 + i/rate, whatever became of the earlier
// ones: no request waits for another's answer. The first `warmup` seconds of orders are sent on the
// same schedule but measured apart. Once every accepted order is terminal, each record is read back,
// and an order's latency is the time its record reached Processed (from its history) minus the time
// its POST was sent, both on this machine's clock. Prints one JSON object.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { demoOrder } from "../laptop/embedded/demo.js";
import { EMBEDDED_SYNCHRONOUS } from "../laptop/embedded/embedded-stack.js";
import { type Distribution, distribution } from "../laptop/simulation/distribution.js";
import { seededRandom } from "../src/domain/backoff.js";
import { isTerminal, PROCESS_STATES, type StateRecord } from "../src/domain/state-record.js";
import { integer, parseRates } from "./bench-options.js";

const USAGE =
  "usage: tsx bench/open-loop.ts [--rates <n,...>] [--seconds <n>] [--warmup <n>]\n" +
  "  rates each 1 to 5000 orders/s (default 100,200,400), seconds 1 to 3600 (default 20),\n" +
  "  warm-up seconds sent first and not measured, 0 to 600 (default 10)";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Seconds of orders sent, unmeasured, before the measured ones. */
export const DEFAULT_WARMUP_SECONDS = 10;
/** After the last send, how long the accepted orders may take to become terminal. */
const DRAIN_SECONDS = 300;

/**
 * One rate's figures. An accepted order that never reached Processed counts as infinitely late in
 * `latencyMs` (written null in the JSON), so an unfinished tail shows in p99 and max, never hidden.
 */
export interface RateResult {
  readonly rate: number;
  readonly seconds: number;
  readonly sent: number;
  /** Answered 202. */
  readonly accepted: number;
  /** Answered 429: the backlog of Pending orders was full. */
  readonly refused: number;
  /** Any other answer, or no answer. */
  readonly errors: number;
  readonly errorSamples: readonly string[];
  /** Sends per second over the sending window, as they happened. */
  readonly achievedRate: number;
  /** How late each send was against its schedule. */
  readonly sendLagMs: Distribution;
  /** How long each POST took to be answered. */
  readonly answerMs: Distribution;
  /** Accepted orders by where they ended; `unfinished` were not terminal when waiting gave up. */
  readonly outcomes: Readonly<Record<string, number>>;
  readonly latencyMs: Distribution;
  /** The orders sent before the measured ones, on the same schedule, and their latencies. */
  readonly warmup: {
    readonly seconds: number;
    readonly sent: number;
    readonly accepted: number;
    readonly latencyMs: Distribution;
  };
}

interface Send {
  readonly orderId: string;
  readonly lagMs: number;
  /** Epoch milliseconds when the request was written. */
  readonly sentAt: number;
  status?: number;
  error?: string;
  answerMs?: number;
}

function options(): { rates: number[]; seconds: number; warmupSeconds: number } {
  try {
    const { values } = parseArgs({
      options: {
        rates: { type: "string", default: "100,200,400" },
        seconds: { type: "string", default: "20" },
        warmup: { type: "string", default: String(DEFAULT_WARMUP_SECONDS) },
      },
      strict: true,
      allowPositionals: false,
    });
    return {
      rates: parseRates(values.rates),
      seconds: integer("seconds", values.seconds, 1, 3_600),
      warmupSeconds: integer("warmup", values.warmup, 0, 600),
    };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

interface Host {
  readonly url: string;
  stop(): Promise<void>;
}

/** `sas start` on a free port, with no demo batch and no partner faults; resolves once it serves. */
async function startHost(dataDir: string): Promise<Host> {
  const args = [
    ...["--import", "tsx", join(ROOT, "laptop/cli/main.ts"), "start"],
    ...["--data", dataDir, "--port", "0", "--demo-orders", "0", "--seed", "1", "--no-store"],
    ...["--transient-faults", "0", "--permanent-faults", "0", "--slow", "0", "--lost-replies", "0"],
    ...["--duplicate-replies", "0"],
  ];
  // In this process's group: stopping the group (npm run bench does, past its time limit) stops it too.
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the host did not serve within 60 s: ${output}`));
    }, 60_000);
    const read = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
      const served = /serving (http:\/\/[^\s:]+:\d+)/.exec(output);
      if (served?.[1]) {
        clearTimeout(timer);
        resolve(served[1]);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the host exited with ${code} before serving: ${output}`));
    });
  });
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      const stopped = await Promise.race([
        exited.then(() => true),
        sleep(15_000, undefined, { ref: false }).then(() => false),
      ]);
      if (!stopped) child.kill("SIGKILL");
    },
  };
}

/** POST `body`; records the answer's status or the error on `send`, never throws. */
function post(agent: Agent, url: string, body: string, send: Send, started: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${url}/api/orders`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    req.once("response", (res) => {
      res.resume();
      res.once("end", () => {
        send.status = res.statusCode ?? 0;
        send.answerMs = performance.now() - started;
        resolve();
      });
    });
    req.once("error", (error) => {
      send.error = error.message;
      resolve();
    });
    req.end(body);
  });
}

async function getJson(agent: Agent, url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.once("end", () => {
        if (res.statusCode !== 200) reject(new Error(`GET ${url}: ${res.statusCode}`));
        else resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      });
    });
    req.once("error", reject);
    req.end();
  });
}

/** Sends `rate × seconds` orders on the fixed schedule; resolves when every POST has been answered. */
async function sendOnSchedule(agent: Agent, url: string, rate: number, seconds: number): Promise<Send[]> {
  const total = rate * seconds;
  const random = seededRandom(rate);
  const prefix = `open-${rate}-${Date.now().toString(36)}`;
  const orders = Array.from({ length: total }, (_, i) => demoOrder(prefix, i, random));
  const bodies = orders.map((order) => JSON.stringify(order));
  const sends: Send[] = [];
  const answers: Promise<void>[] = [];
  const intervalMs = 1_000 / rate;
  const t0 = performance.now() + 20;
  let i = 0;
  while (i < total) {
    const now = performance.now();
    for (; i < total && t0 + i * intervalMs <= now; i++) {
      const body = bodies[i] ?? "";
      const send: Send = {
        orderId: orders[i]?.orderId ?? "",
        lagMs: now - (t0 + i * intervalMs),
        sentAt: Date.now(),
      };
      sends.push(send);
      answers.push(post(agent, url, body, send, now));
    }
    if (i < total) await sleep(Math.max(0, t0 + i * intervalMs - performance.now()));
  }
  await Promise.all(answers);
  return sends;
}

/** Waits until the host counts `accepted` terminal records, or gives up after DRAIN_SECONDS. */
async function drain(agent: Agent, url: string, accepted: number): Promise<void> {
  const deadline = Date.now() + DRAIN_SECONDS * 1_000;
  while (Date.now() < deadline) {
    const stats = (await getJson(agent, `${url}/api/stats`)) as { counts: Record<string, number> };
    const terminal = PROCESS_STATES.filter(isTerminal).reduce((n, s) => n + (stats.counts[s] ?? 0), 0);
    if (terminal >= accepted) return;
    await sleep(250);
  }
}

/** When the record reached Processed: its history's entry, or its last change if the entry was folded away. */
export function processedAt(
  record: Pick<StateRecord, "processState" | "history" | "updatedAt">,
): number | null {
  if (record.processState !== "Processed") return null;
  const entry = record.history.findLast((e) => e.to === "Processed");
  return Date.parse(entry?.at ?? record.updatedAt);
}

/** Each accepted order's end (its record's state) and latency, read back from the host. */
async function endsOf(
  agent: Agent,
  url: string,
  accepted: readonly Send[],
): Promise<Map<string, { ended: string; latencyMs: number }>> {
  const ends = new Map<string, { ended: string; latencyMs: number }>();
  for (let from = 0; from < accepted.length; from += 32) {
    const batch = accepted.slice(from, from + 32);
    const records = await Promise.all(
      batch.map((s) => getJson(agent, `${url}/api/orders/${s.orderId}`) as Promise<StateRecord>),
    );
    records.forEach((record, k) => {
      const send = batch[k];
      if (!send) return;
      const at = processedAt(record);
      ends.set(send.orderId, {
        ended: isTerminal(record.processState) ? record.processState : "unfinished",
        latencyMs: at === null ? Number.POSITIVE_INFINITY : at - send.sentAt,
      });
    });
  }
  return ends;
}

/** The latencies of the accepted orders among `sends`. */
function latenciesOf(sends: readonly Send[], ends: ReadonlyMap<string, { latencyMs: number }>): number[] {
  return sends.flatMap((s) => {
    const end = s.status === 202 ? ends.get(s.orderId) : undefined;
    return end ? [end.latencyMs] : [];
  });
}

/**
 * Sends at `rate` for `warmupSeconds`, then on the same schedule without a pause for `seconds`: the
 * figures are those of the second part. A freshly started host is slow for its first second or two
 * (the JIT compiling, connections to the partner opening, caches filling), which alone made the p99
 * of a 20-second run; the warm-up's latencies are reported apart.
 */
async function measureRate(rate: number, seconds: number, warmupSeconds: number): Promise<RateResult> {
  const dataDir = mkdtempSync(join(tmpdir(), "sas-open-loop-"));
  const agent = new Agent({ keepAlive: true });
  const host = await startHost(dataDir);
  try {
    const all = await sendOnSchedule(agent, host.url, rate, warmupSeconds + seconds);
    const warmupSends = all.slice(0, rate * warmupSeconds);
    const sends = all.slice(rate * warmupSeconds);
    const accepted = sends.filter((s) => s.status === 202);
    const everyAccepted = all.filter((s) => s.status === 202);
    await drain(agent, host.url, everyAccepted.length);
    const ends = await endsOf(agent, host.url, everyAccepted);
    const outcomes: Record<string, number> = {};
    for (const send of accepted) {
      const ended = ends.get(send.orderId)?.ended ?? "unfinished";
      outcomes[ended] = (outcomes[ended] ?? 0) + 1;
    }
    const errors = sends.filter((s) => s.status !== 202 && s.status !== 429);
    const first = sends[0]?.sentAt ?? 0;
    const last = sends[sends.length - 1]?.sentAt ?? 0;
    return {
      rate,
      seconds,
      sent: sends.length,
      accepted: accepted.length,
      refused: sends.filter((s) => s.status === 429).length,
      errors: errors.length,
      errorSamples: [...new Set(errors.map((s) => s.error ?? `HTTP ${s.status}`))].slice(0, 3),
      achievedRate: last > first ? (sends.length - 1) / ((last - first) / 1_000) : 0,
      sendLagMs: distribution(sends.map((s) => s.lagMs)),
      answerMs: distribution(sends.flatMap((s) => (s.answerMs === undefined ? [] : [s.answerMs]))),
      outcomes,
      latencyMs: distribution(latenciesOf(sends, ends)),
      warmup: {
        seconds: warmupSeconds,
        sent: warmupSends.length,
        accepted: warmupSends.filter((s) => s.status === 202).length,
        latencyMs: distribution(latenciesOf(warmupSends, ends)),
      },
    };
  } finally {
    agent.destroy();
    await host.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { rates, seconds, warmupSeconds } = options();
  const results: RateResult[] = [];
  for (const rate of rates) {
    console.error(`open loop: ${rate} orders/s for ${warmupSeconds} s of warm-up, then ${seconds} s`);
    results.push(await measureRate(rate, seconds, warmupSeconds));
  }
  const durability = `file, WAL, synchronous=${EMBEDDED_SYNCHRONOUS} (sas start)`;
  // JSON has no Infinity: an unfinished order's latency is written as null.
  console.log(JSON.stringify({ durability, rates: results }, (_, v) => (v === Infinity ? null : v)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  });
}
