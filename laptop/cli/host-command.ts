import { parseArgs } from "node:util";
import { type Command, showUsage, untilStopped } from "./command.js";
import { HELP, integer } from "./flags.js";
import { isLoopback } from "./loopback.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas host [flags]   (npm run host -- [flags], which builds the app first)

Runs the built Azure Functions app (npm run build) as the Functions host would, with stand-ins for
the services its settings (local.settings.json) point at on this machine: the Service Bus broker,
the Cosmos DB stand-in, Azurite, the simulated partner, and an embedded orders table when no SQL
Server answers. Run it from the app's root, where local.settings.json is.

  --port <n>                  HTTP port of the functions (default 7071)
  --host <address>            address to listen on (default 127.0.0.1; loopback only)
  --data <dir>                durable store, orders table, Azurite's blobs, partner ledger and the
                              host's keys (default .sas-host)
`;

export const HOST: Command = {
  name: "host",
  summary: [
    "run the built Azure Functions app (npm run build) as the Functions host would, with",
    "stand-ins for the services its settings (local.settings.json) point at on this machine:",
    "the Service Bus broker, the Cosmos DB stand-in, Azurite, the simulated partner, and an",
    "embedded orders table when no SQL Server answers",
  ],
  usage: USAGE,
  run: host,
};

async function host(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: { port: { type: "string" }, host: { type: "string" }, data: { type: "string" }, ...HELP },
  });
  if (values.help) return showUsage(USAGE);
  const address = values.host ?? "127.0.0.1";
  if (!isLoopback(address)) {
    throw new UsageError(`--host ${address} is reachable from other machines; sas host serves loopback only`);
  }
  const { startFunctionsHost } = await import("../functions-host/functions-host.js");
  const { JsonLogger } = await import("../../src/adapters/logging/json-logger.js");
  const functionsHost = await startFunctionsHost({
    appRoot: process.cwd(),
    data: values.data ?? ".sas-host",
    port: integer(values, "port", 7071, 0, 65_535),
    host: address,
    env: process.env,
    logger: JsonLogger.toStream(process.stderr),
  });
  const lines = [
    ...functionsHost.notes,
    `keys: function key ${functionsHost.keys.functionKey}, master key ${functionsHost.keys.masterKey} (sas orders --key <key>)`,
    `sas host: functions on ${functionsHost.url}/api; Ctrl+C stops it`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  await untilStopped();
  await functionsHost.close();
  // The app's own clients (Cosmos DB's endpoint refresh, keep-alive sockets) have no shutdown hook:
  // the Functions host ends the worker process, and so does this.
  process.exit(0);
}
