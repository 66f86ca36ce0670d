#!/usr/bin/env node
import { parseArgs } from "node:util";
import { ORDERS_USAGE, ordersCommand } from "./orders-command.js";
import type { PartnerFaults } from "./partner/faults.js";
import { createStatusLine } from "./status-line.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas <command> [flags]

commands:
  start   run the whole pipeline on the embedded host, submit a demo batch, then keep serving
          the orders API (/api/orders, /api/stats, the operator commands) and the dashboard (/)
          on 127.0.0.1 until stopped
  demo    submit a finite batch, wait until every order is settled, print a summary and check
          the invariants; exits 1 if one is broken

  partner run only the simulated partner service (for the Functions host's PARTNER_URL)
  send    post generated order messages to the Service Bus queue named by the settings
          (ServiceBusConnection or ServiceBusConnection__fullyQualifiedNamespace, read from the
          environment or from ./local.settings.json)
  orders  list orders, show one, or resubmit or compensate it as an operator (see below)
  stats   the orders in each state, in flight, the oldest Pending order, dead-lettered and parked
          messages, the last Supervisor scan and throughput (see below)

flags (start, demo; fault flags and --seed for partner too):
  --transient-faults <rate>   share of partner calls failing with 503/429      (0 to 1)
  --permanent-faults <rate>   share of partner calls rejected with 422         (0 to 1)
  --slow <rate>               share of partner answers delayed past deadlines  (0 to 1)
  --lost-replies <rate>       share of answers lost after the effect applied   (0 to 1)
  --duplicate-replies <rate>  share of Agent replies delivered twice           (0 to 1)
  --seed <n>                  seed of every fault decision                     (integer)
  --agent activity|queue      the Agent's form                                 (default activity)
  --data <dir>|:memory:       where the database lives (start: .data; demo: a fresh
                              temporary directory, removed afterwards)

start only:
  --port <n>                  HTTP port (default 7071)
  --host <address>            address to listen on (default 127.0.0.1); any other needs --api-token
  --api-token <token>         required by the operator commands as "Authorization: Bearer <token>"
                              (at least 16 characters)
  --demo-orders <n>           orders submitted at start (default 20)

partner only:
  --port <n>                  HTTP port (default 7072)

send only:
  --count <n>                 orders to send (required)
  --queue <name>              queue (default orders)
  --reply-to <name>           status queue named in each order (default order-status)

demo only:
  --orders <n>                orders to submit (default 100)
  --timeout <seconds>         give up waiting after this long (default 300)
  --json                      print exactly one JSON object on stdout
  --log <file>                write every log line (JSON) to this file

${ORDERS_USAGE}`;

export { UsageError };

type Flags = Record<string, string | boolean | undefined>;

function rate(flags: Flags, name: string, fallback: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new UsageError(`--${name} must be a number from 0 to 1; got ${String(raw)}`);
  }
  return value;
}

function integer(flags: Flags, name: string, fallback: number, min: number, max: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== "string" || !/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}; got ${String(raw)}`);
  }
  return Number(raw);
}

function faultsFrom(flags: Flags, defaults: PartnerFaults): PartnerFaults {
  const faults = {
    transient: rate(flags, "transient-faults", defaults.transient),
    permanent: rate(flags, "permanent-faults", defaults.permanent),
    slow: rate(flags, "slow", defaults.slow),
    lostReply: rate(flags, "lost-replies", defaults.lostReply),
  };
  const sum = faults.transient + faults.permanent + faults.slow + faults.lostReply;
  if (sum > 1) throw new UsageError(`the fault rates add up to ${sum}; at most 1`);
  return faults;
}

function agentFrom(flags: Flags): "activity" | "queue" {
  const agent = flags.agent ?? "activity";
  if (agent !== "activity" && agent !== "queue")
    throw new UsageError(`--agent must be activity or queue; got ${String(agent)}`);
  return agent;
}

const COMMON = {
  "transient-faults": { type: "string" },
  "permanent-faults": { type: "string" },
  slow: { type: "string" },
  "lost-replies": { type: "string" },
  "duplicate-replies": { type: "string" },
  seed: { type: "string" },
  agent: { type: "string" },
  data: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  try {
    if (command === "demo") return await demoCommand(rest);
    if (command === "start") return await startCommand(rest);
    if (command === "partner") return await partnerCommand(rest);
    if (command === "send") return await sendCommand(rest);
    if (command === "orders" || command === "stats") {
      return await ordersCommand(command === "stats" ? ["stats", ...rest] : rest, {
        fetch,
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      });
    }
    throw new UsageError(`unknown command ${command}`);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    if ((error as Error).name === "SettingsError") {
      process.stderr.write(`${(error as Error).message}\n`);
      return 2;
    }
    throw error;
  }
}

async function demoCommand(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      ...COMMON,
      orders: { type: "string" },
      timeout: { type: "string" },
      json: { type: "boolean" },
      log: { type: "string" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = values as Flags;
  const { runDemo } = await import("./demo.js");
  const { createWriteStream } = await import("node:fs");
  const logStream = typeof values.log === "string" ? createWriteStream(values.log) : undefined;
  const json = values.json === true;
  const summary = await runDemo({
    orders: integer(flags, "orders", 100, 1, 1_000_000),
    faults: faultsFrom(flags, { transient: 0, permanent: 0, slow: 0, lostReply: 0 }),
    duplicateReplies: rate(flags, "duplicate-replies", 0),
    seed: integer(flags, "seed", 1, -2_147_483_648, 2_147_483_647),
    agent: agentFrom(flags),
    ...(typeof values.data === "string" ? { data: values.data } : {}),
    timeoutMs: integer(flags, "timeout", 300, 1, 86_400) * 1_000,
    env: process.env,
    ...(logStream ? { log: (line: object) => logStream.write(`${JSON.stringify(line)}\n`) } : {}),
    ...(json ? {} : { progress: (counts: Readonly<Record<string, number>>) => showProgress(counts) }),
  });
  logStream?.end();
  if (json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    process.stdout.write(`\n${JSON.stringify(summary, null, 2)}\n`);
    for (const violation of summary.invariants.violations)
      process.stdout.write(`invariant broken: ${violation}\n`);
  }
  const unsettled = summary.orders.Pending + summary.orders.Processing + summary.orders.Compensating;
  return summary.invariants.ok && unsettled === 0 ? 0 : 1;
}

let lastProgress = 0;
const progressLine = createStatusLine(process.stderr);
function showProgress(counts: Readonly<Record<string, number>>): void {
  const now = Date.now();
  if (now - lastProgress < 500) return;
  lastProgress = now;
  progressLine(
    Object.entries(counts)
      .map(([key, n]) => `${key} ${n}`)
      .join("  "),
  );
}

async function startCommand(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      ...COMMON,
      port: { type: "string" },
      "demo-orders": { type: "string" },
      host: { type: "string" },
      "api-token": { type: "string" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = values as Flags;
  const { runHost } = await import("./host.js");
  const host = typeof values.host === "string" ? values.host : "127.0.0.1";
  const apiToken = values["api-token"];
  checkExposure(host, apiToken);
  await runHost({
    port: integer(flags, "port", 7071, 0, 65_535),
    host,
    ...(apiToken !== undefined ? { apiToken } : {}),
    data: typeof values.data === "string" ? values.data : ".data",
    demoOrders: integer(flags, "demo-orders", 20, 0, 100_000),
    faults: faultsFrom(flags, { transient: 0.2, permanent: 0.02, slow: 0.05, lostReply: 0.05 }),
    duplicateReplies: rate(flags, "duplicate-replies", 0.05),
    seed: integer(flags, "seed", 7, -2_147_483_648, 2_147_483_647),
    agent: agentFrom(flags),
    env: process.env,
  });
  return 0;
}

const LOOPBACK = ["127.0.0.1", "::1", "localhost"];
const MIN_TOKEN_LENGTH = 16;

/** Off loopback the HTTP API can be reached by others: the operator commands then need a token. */
function checkExposure(host: string, apiToken: string | undefined): void {
  if (apiToken !== undefined && apiToken.length < MIN_TOKEN_LENGTH) {
    throw new UsageError(`--api-token must be at least ${MIN_TOKEN_LENGTH} characters`);
  }
  if (!LOOPBACK.includes(host) && apiToken === undefined) {
    throw new UsageError(
      `--host ${host} is reachable from other machines: give --api-token <token>, which the operator commands then require`,
    );
  }
}

async function partnerCommand(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: { ...COMMON, port: { type: "string" } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = values as Flags;
  const { startPartnerService } = await import("./partner/partner-service.js");
  const { SystemClock } = await import("../adapters/clock/system-clock.js");
  const { JsonLogger } = await import("../adapters/logging/json-logger.js");
  const partner = await startPartnerService({
    port: integer(flags, "port", 7072, 0, 65_535),
    faults: faultsFrom(flags, { transient: 0, permanent: 0, slow: 0, lostReply: 0 }),
    seed: integer(flags, "seed", 7, -2_147_483_648, 2_147_483_647),
    clock: new SystemClock(),
    logger: JsonLogger.toStream(process.stderr),
  });
  process.stdout.write(`simulated partner on ${partner.url}; set PARTNER_URL to it. Ctrl+C stops it.\n`);
  await new Promise<void>((resolve) => process.once("SIGINT", resolve));
  await partner.close();
  process.stdout.write(`${JSON.stringify(partner.ledger())}\n`);
  return 0;
}

async function sendCommand(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      count: { type: "string" },
      queue: { type: "string" },
      "reply-to": { type: "string" },
      seed: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = values as Flags;
  if (flags.count === undefined) throw new UsageError("--count is required");
  const count = integer(flags, "count", 0, 1, 1_000_000);
  const seed = integer(flags, "seed", Date.now() % 1_000_000, 0, 2_147_483_647);
  const queueName = typeof values.queue === "string" ? values.queue : "orders";
  const replyTo = typeof values["reply-to"] === "string" ? values["reply-to"] : "order-status";
  const { sendToServiceBus } = await import("./send-to-service-bus.js");
  const result = await sendToServiceBus({
    env: process.env,
    cwd: process.cwd(),
    queueName,
    count,
    seed,
    replyTo,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("cli.ts")) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code !== 0) process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
