import { Console } from "node:console";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { LogLevel } from "../../src/adapters/logging/json-logger.js";
import type { FunctionsHost } from "../functions-host/functions-host.js";
import { isLogLevel, LOG_LEVELS, openHostLog } from "../functions-host/host-log.js";
import { type Command, showUsage, untilStopped } from "./command.js";
import { HELP, integer, type StringFlags } from "./flags.js";
import { isLoopback } from "./loopback.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas host [flags]   (npm run host -- [flags], which builds the app first)

Runs the built Azure Functions app (npm run build) as the Functions host would, with stand-ins for
the services its settings (local.settings.json) point at on this machine: the Service Bus broker,
the Cosmos DB stand-in, Azurite, the simulated partner, and an embedded orders table when no SQL
Server answers. Beside it, the storefront (storefront/main.ts) on the same Service Bus: orders to the
orders queue, status messages from its own storefront-status queue. Run it from the app's root, where
local.settings.json is.

  --port <n>                  HTTP port of the functions (default 7071)
  --host <address>            address to listen on (default 127.0.0.1; loopback only)
  --data <dir>                durable store, orders table, Azurite's blobs, partner ledger, the
                              host's keys and the storefront's order book (default .sas-host)
  --store-port <n>            HTTP port of the storefront (default 7080), on the same address
  --no-store                  run no storefront
  --durable <engine>          where the orchestrations run: extension (Microsoft's Durable Task
                              extension on Azurite's Azure Storage, built with dotnet; the default
                              where a .NET SDK 8 or later is installed) or local (the local durable
                              runtime, the default without one)
  --log-level <level>         show the log's lines of this level and above here too: debug, info,
                              warn or error (default none: the log goes to <data>/sas-host.log only)
  --no-summary                show no orders per state (it reads GET /api/stats every 1 to 5 s,
                              which a measurement of the app's own requests leaves out)

It prints what it started and its addresses (the dashboard's with the function key, to open as it
is), then the orders in each state: one line kept up to date on a terminal, a line per change
(read every 5 s) when its output goes to a file or a pipe.
`;

export const HOST: Command = {
  name: "host",
  summary: [
    "run the built Azure Functions app (npm run build) as the Functions host would, with",
    "stand-ins for the services its settings (local.settings.json) point at on this machine:",
    "the Service Bus broker, the Cosmos DB stand-in, Azurite, the simulated partner, and an",
    "embedded orders table when no SQL Server answers; and the storefront beside it",
  ],
  usage: USAGE,
  run: host,
};

async function host(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      data: { type: "string" },
      "store-port": { type: "string" },
      "no-store": { type: "boolean" },
      durable: { type: "string" },
      "log-level": { type: "string" },
      "no-summary": { type: "boolean" },
      ...HELP,
    },
  });
  if (values.help) return showUsage(USAGE);
  const address = values.host ?? "127.0.0.1";
  if (!isLoopback(address)) {
    throw new UsageError(`--host ${address} is reachable from other machines; sas host serves loopback only`);
  }
  const port = integer(values, "port", 7071, 0, 65_535);
  const store = storeFrom(values, port);
  const echo = logLevel(values["log-level"]);
  const durable = await durableEngine(values.durable);
  const data = values.data ?? ".sas-host";
  const { startFunctionsHost } = await import("../functions-host/functions-host.js");
  const log = openHostLog(join(data, LOG_FILE), echo, process.stderr);
  // The app logs with console.log, which the Functions host takes into its log: so does this.
  const appConsole = globalThis.console;
  globalThis.console = new Console(log.stream, log.stream);
  let failed = false;
  const functionsHost = await startFunctionsHost({
    appRoot: process.cwd(),
    data,
    port,
    host: address,
    env: process.env,
    logger: log.logger,
    ...(store ? { store } : {}),
    durable,
    say: (line) => process.stdout.write(`sas host: ${line}\n`),
    log: log.stream,
    onFailure: (error) => {
      process.stderr.write(`sas host: ${error.message}\n`);
      failed = true;
      process.kill(process.pid, "SIGTERM");
    },
  }).catch(endOnceReported);
  process.stdout.write(`${banner(functionsHost, log.path, echo).join("\n")}\n`);
  const { startHostSummary } = await import("../functions-host/host-summary.js");
  const summary = values["no-summary"]
    ? undefined
    : startHostSummary({
        url: functionsHost.url,
        functionKey: functionsHost.keys.functionKey,
        out: process.stdout,
      });
  await untilStopped();
  await summary?.stop();
  process.stdout.write("sas host: stopping\n");
  await functionsHost.close();
  globalThis.console = appConsole;
  log.close();
  // The app's own clients (Cosmos DB's endpoint refresh, keep-alive sockets) have no shutdown hook:
  // the Functions host ends the worker process, and so does this.
  process.exit(failed ? 1 : 0);
}

const LOG_FILE = "sas-host.log";

/** What started (the engine, each stand-in, the choices made), the log and the keys, then the addresses. */
function banner(functionsHost: FunctionsHost, logPath: string, echo: LogLevel | undefined): string[] {
  const { url, keys, storeUrl } = functionsHost;
  const shown =
    echo === undefined ? "--log-level info shows its lines here too" : `${echo} and above shown here too`;
  return [
    ...functionsHost.notes,
    `sas host: log in ${logPath} (${shown})`,
    `keys: function key ${keys.functionKey}, master key ${keys.masterKey} (sas orders --key <key>)`,
    `sas host: dashboard on ${url}/api/dashboard?code=${encodeURIComponent(keys.functionKey)}`,
    ...(storeUrl ? [`sas host: storefront on ${storeUrl}/`] : []),
    `sas host: functions on ${url}/api; Ctrl+C stops it`,
  ];
}

/** `--log-level`'s level, or undefined without it (the terminal then shows no log line). */
function logLevel(flag: string | undefined): LogLevel | undefined {
  if (flag === undefined) return undefined;
  if (!isLogLevel(flag)) throw new UsageError(`--log-level ${flag}: give ${LOG_LEVELS.join(", ")}`);
  return flag;
}

/** The engine `--durable` names, or the default for this machine; the first line says which, and why. */
async function durableEngine(flag: string | undefined) {
  const { chooseDurableEngine } = await import("../functions-host/durable-choice.js");
  const choice = chooseDurableEngine(flag);
  if ("refused" in choice) throw new UsageError(choice.refused);
  process.stdout.write(`${choice.line}\n`);
  return choice.engine;
}

/** Where the storefront listens, or undefined with --no-store; never on the functions' port. */
function storeFrom(
  flags: StringFlags<"store-port"> & { readonly "no-store"?: boolean | undefined },
  functionsPort: number,
): { readonly port: number } | undefined {
  if (flags["no-store"]) {
    if (flags["store-port"] !== undefined) throw new UsageError("give --store-port or --no-store, not both");
    return undefined;
  }
  const port = integer(flags, "store-port", 7080, 0, 65_535);
  if (port !== 0 && port === functionsPort)
    throw new UsageError(`--store-port ${port} is the functions' port (--port): give them different ports`);
  return { port };
}

/**
 * A start that failed has closed whatever it had started; main reports the failure and sets the exit
 * status (2 for a taken port or a bad setting). Once the app has loaded, its clients may still hold
 * the process open (see above), so it ends right after that report: the report and the exit status
 * are settled in promise callbacks, which all run before a timer does.
 */
function endOnceReported(error: unknown): never {
  setTimeout(() => process.exit(), 0);
  throw error;
}
