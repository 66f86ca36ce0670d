#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { agentFrom, COMMON, type Flags, faultsFrom, integer, rate } from "./flags.js";
import { ORDERS_USAGE, ordersCommand } from "./orders-command.js";
import { createStatusLine } from "./status-line.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas <command> [flags]

commands:
  start   run the whole pipeline on the embedded host, submit a demo batch, then keep serving
          the orders API (/api/orders, /api/stats, the operator commands) and the dashboard (/)
          on 127.0.0.1 until stopped
  demo    submit a finite batch, wait until every order is settled, print a summary and check
          the invariants; exits 1 if one is broken

  host    run the built Azure Functions app (npm run build) as the Functions host would, with
          stand-ins for the services its settings (local.settings.json) point at on this machine:
          the Service Bus broker, the Cosmos DB stand-in, Azurite, the simulated partner, and an
          embedded orders table when no SQL Server answers (see below)
  keys    the data-protection key ring: "sas keys new" prints a new one for DATA_PROTECTION_KEYS;
          "sas keys rotate --data <dir>" puts a new key in front of that data folder's key file
  partner run only the simulated partner service (for the Functions host's PARTNER_URL)
  send    post generated order messages to the Service Bus queue named by the settings
          (ServiceBusConnection or ServiceBusConnection__fullyQualifiedNamespace, read from the
          environment or from ./local.settings.json)
  orders  list orders, show one, or resubmit or compensate it as an operator (see below)
  chaos   kill the host and the partner at random moments under load, then check that nothing
          was lost or applied twice (sas chaos --help)
  soak    a steady load with faults for a given time, reporting throughput, latency and memory
          every minute (sas soak --help)
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
  --partner-url <url>         call a partner started separately (sas partner) instead of starting
                              one; the fault flags then belong to that partner

host only (run it from the app's root, where local.settings.json is):
  --port <n>                  HTTP port of the functions (default 7071)
  --host <address>            address to listen on (default 127.0.0.1)
  --data <dir>                durable store, orders table, Azurite's blobs, partner ledger and the
                              host's keys (default .sas-host)

partner only:
  --port <n>                  HTTP port (default 7072)
  --ledger <file>             keep the idempotency records and the effect ledger in this SQLite
                              file, so they survive restarts (default: in memory)

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
    if (command === "host") return await hostCommand(rest);
    if (command === "keys") return await keysCommand(rest);
    if (command === "send") return await sendCommand(rest);
    if (command === "chaos") return await chaosCommand(rest);
    if (command === "soak") return await soakCommand(rest);
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
  const { runDemo } = await import("../embedded/demo.js");
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
      "partner-url": { type: "string" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = values as Flags;
  const { runHost } = await import("../embedded/host.js");
  const host = typeof values.host === "string" ? values.host : "127.0.0.1";
  const apiToken = values["api-token"];
  checkExposure(host, apiToken);
  const partnerUrl = partnerUrlFrom(flags);
  await runHost({
    ...(partnerUrl !== undefined ? { partnerUrl } : {}),
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

const PARTNER_FAULT_FLAGS = ["transient-faults", "permanent-faults", "slow", "lost-replies"];

/** An http(s) URL without a trailing slash; the partner's fault flags go to `sas partner`, not here. */
function partnerUrlFrom(flags: Flags): string | undefined {
  const raw = flags["partner-url"];
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    throw new UsageError(`--partner-url must be an http or https URL; got ${String(raw)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--partner-url must be an http or https URL; got ${String(raw)}`);
  const given = PARTNER_FAULT_FLAGS.filter((name) => flags[name] !== undefined);
  if (given.length > 0)
    throw new UsageError(
      `--${given[0]} configures the simulated partner, which --partner-url replaces: give it to sas partner`,
    );
  return String(raw).replace(/\/+$/, "");
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

async function hostCommand(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      data: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = values as Flags;
  const host = values.host ?? "127.0.0.1";
  if (!LOOPBACK.includes(host)) {
    throw new UsageError(`--host ${host} is reachable from other machines; sas host serves loopback only`);
  }
  const { startFunctionsHost } = await import("../functions-host/functions-host.js");
  const { JsonLogger } = await import("../../src/adapters/logging/json-logger.js");
  const functionsHost = await startFunctionsHost({
    appRoot: process.cwd(),
    data: values.data ?? ".sas-host",
    port: integer(flags, "port", 7071, 0, 65_535),
    host,
    env: process.env,
    logger: JsonLogger.toStream(process.stderr),
  });
  const lines = [
    ...functionsHost.notes,
    `keys: function key ${functionsHost.keys.functionKey}, master key ${functionsHost.keys.masterKey} (sas orders --key <key>)`,
    `sas host: functions on ${functionsHost.url}/api; Ctrl+C stops it`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await functionsHost.close();
  // The app's own clients (Cosmos DB's endpoint refresh, keep-alive sockets) have no shutdown hook:
  // the Functions host ends the worker process, and so does this.
  process.exit(0);
}

async function keysCommand(args: readonly string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: { data: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  const { newKeyRingText, rotateKeyFile } = await import("../embedded/key-file.js");
  if (values.help || action === undefined) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (action === "new") {
    process.stdout.write(`${newKeyRingText(new Date())}\n`);
    return 0;
  }
  if (action !== "rotate") throw new UsageError(`unknown keys action ${action}: new or rotate`);
  if (values.data === undefined)
    throw new UsageError("sas keys rotate needs --data <dir>, the folder holding the key file");
  const ids = rotateKeyFile(values.data, new Date());
  process.stdout.write(
    `key ring now ${ids.join(", ")}: new writes sealed under ${ids[0]}, older keys kept to open what they sealed\n`,
  );
  return 0;
}

async function partnerCommand(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: { ...COMMON, port: { type: "string" }, ledger: { type: "string" } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = values as Flags;
  const { startPartnerService } = await import("../simulation/partner/partner-service.js");
  const { openLedgerFile } = await import("../simulation/partner/ledger-file.js");
  const { SystemClock } = await import("../../src/adapters/clock/system-clock.js");
  const { JsonLogger } = await import("../../src/adapters/logging/json-logger.js");
  const { DEMO_SLOW_MS } = await import("../embedded/embedded-stack.js");
  const port = integer(flags, "port", 7072, 0, 65_535);
  const faults = faultsFrom(flags, { transient: 0, permanent: 0, slow: 0, lostReply: 0 });
  const seed = integer(flags, "seed", 7, -2_147_483_648, 2_147_483_647);
  const file = typeof values.ledger === "string" ? openLedgerFile(values.ledger) : undefined;
  const partner = await startPartnerService({
    port,
    faults,
    seed,
    slowMs: DEMO_SLOW_MS,
    ...(file ? { ledger: file.ledger } : {}),
    clock: new SystemClock(),
    logger: JsonLogger.toStream(process.stderr),
  });
  const kept = file
    ? `ledger in ${values.ledger} (${file.restoredEvents} events restored)`
    : "ledger in memory (give --ledger <file> to keep it across restarts)";
  process.stdout.write(
    `simulated partner on ${partner.url}; ${kept}; GET ${partner.url}/ledger shows it. Set PARTNER_URL (or sas start --partner-url) to it. Ctrl+C stops it.\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await partner.close();
  process.stdout.write(`${JSON.stringify(partner.ledgerData().totals)}\n`);
  file?.close();
  return 0;
}

async function chaosCommand(args: readonly string[]): Promise<number> {
  const { parseChaosOptions, CHAOS_USAGE } = await import("../simulation/chaos/chaos-options.js");
  const { runChaos } = await import("../simulation/chaos/chaos.js");
  return runChecked(args, parseChaosOptions, CHAOS_USAGE, runChaos);
}

async function soakCommand(args: readonly string[]): Promise<number> {
  const { parseSoakOptions, SOAK_USAGE } = await import("../simulation/chaos/soak-options.js");
  const { runSoak } = await import("../simulation/chaos/soak.js");
  return runChecked(args, parseSoakOptions, SOAK_USAGE, runSoak);
}

/** A command that runs, prints one summary (pretty, or one JSON line with --json) and exits 1 unless it is ok. */
async function runChecked<O extends { readonly json: boolean }>(
  args: readonly string[],
  parse: (args: readonly string[]) => O | null,
  usage: string,
  run: (options: O, progress: (line: string) => void) => Promise<{ readonly ok: boolean }>,
): Promise<number> {
  let options: O | null;
  try {
    options = parse(args);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"))
      throw error;
    process.stderr.write(`${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  if (options === null) {
    process.stdout.write(usage);
    return 0;
  }
  const summary = await run(options, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${JSON.stringify(summary, null, options.json ? undefined : 2)}\n`);
  return summary.ok ? 0 : 1;
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

/** Run as a program (`sas`, or `node cli.js` through a symlink as npm links bins), not imported. */
function isMain(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isMain()) {
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
