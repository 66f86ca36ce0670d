import { parseArgs } from "node:util";
import { type Command, showUsage } from "./command.js";
import {
  agentFrom,
  COMMON,
  faultsFrom,
  integer,
  PARTNER_FAULT_FLAGS,
  PIPELINE_FLAGS_USAGE,
  rate,
  type StringFlags,
} from "./flags.js";
import { isLoopback } from "./loopback.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas start [flags]   (npm start -- [flags])

Runs the whole pipeline on the embedded host, submits a demo batch, then keeps serving the orders
API (/api/orders, /api/stats, the operator commands) and the dashboard (/), and the storefront
(a shop that places orders through the queues) on its own port, until stopped.

  --port <n>                  HTTP port (default 7071)
  --store-port <n>            the storefront's port (default 7080), on the same address
  --no-store                  no storefront
  --host <address>            address to listen on (default 127.0.0.1); any other needs --api-token
  --api-token <token>         required by the operator commands as "Authorization: Bearer <token>"
                              (at least 16 characters)
  --demo-orders <n>           orders submitted at start (default 20)
  --partner-url <url>         call a partner started separately (sas partner) instead of starting
                              one; the fault flags then belong to that partner
  --data <dir>|:memory:       where the database lives (default .data)
${PIPELINE_FLAGS_USAGE}`;

export const START: Command = {
  name: "start",
  summary: [
    "run the whole pipeline on the embedded host, submit a demo batch, then keep serving",
    "the orders API (/api/orders, /api/stats, the operator commands) and the dashboard (/)",
    "on 127.0.0.1:7071 and the storefront on 127.0.0.1:7080 until stopped",
  ],
  usage: USAGE,
  run: start,
};

async function start(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      ...COMMON,
      port: { type: "string" },
      "store-port": { type: "string" },
      "no-store": { type: "boolean" },
      "demo-orders": { type: "string" },
      host: { type: "string" },
      "api-token": { type: "string" },
      "partner-url": { type: "string" },
    },
  });
  if (values.help) return showUsage(USAGE);
  const { runHost } = await import("../embedded/host.js");
  const host = values.host ?? "127.0.0.1";
  const apiToken = values["api-token"];
  checkExposure(host, apiToken);
  const partnerUrl = partnerUrlFrom(values);
  const port = integer(values, "port", 7071, 0, 65_535);
  const storePort = storePortFrom(values, port);
  // A taken port is a PortInUseError, reported by main (exit 2) once runHost has closed what it started.
  await runHost({
    ...(partnerUrl !== undefined ? { partnerUrl } : {}),
    port,
    storePort,
    host,
    ...(apiToken !== undefined ? { apiToken } : {}),
    data: values.data ?? ".data",
    demoOrders: integer(values, "demo-orders", 20, 0, 100_000),
    faults: faultsFrom(values, { transient: 0.2, permanent: 0.02, slow: 0.05, lostReply: 0.05 }),
    duplicateReplies: rate(values, "duplicate-replies", 0.05),
    seed: integer(values, "seed", 7, -2_147_483_648, 2_147_483_647),
    agent: agentFrom(values),
    env: process.env,
  });
  return 0;
}

/** The storefront's port, or null with --no-store; it cannot share the HTTP API's port. */
function storePortFrom(
  flags: StringFlags<"store-port"> & { "no-store"?: boolean },
  apiPort: number,
): number | null {
  if (flags["no-store"]) {
    if (flags["store-port"] !== undefined) throw new UsageError("give --store-port or --no-store, not both");
    return null;
  }
  const storePort = integer(flags, "store-port", 7080, 0, 65_535);
  if (storePort !== 0 && storePort === apiPort) {
    throw new UsageError(
      `--store-port ${storePort} is the HTTP API's port (--port): give them different ports`,
    );
  }
  return storePort;
}

/** An http(s) URL without a trailing slash; the partner's fault flags go to `sas partner`, not here. */
function partnerUrlFrom(
  flags: StringFlags<"partner-url" | (typeof PARTNER_FAULT_FLAGS)[number]>,
): string | undefined {
  const raw = flags["partner-url"];
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--partner-url must be an http or https URL; got ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--partner-url must be an http or https URL; got ${raw}`);
  const given = PARTNER_FAULT_FLAGS.filter((name) => flags[name] !== undefined);
  if (given.length > 0)
    throw new UsageError(
      `--${given[0]} configures the simulated partner, which --partner-url replaces: give it to sas partner`,
    );
  return raw.replace(/\/+$/, "");
}

const MIN_TOKEN_LENGTH = 16;

/** Off loopback the HTTP API can be reached by others: the operator commands then need a token. */
function checkExposure(host: string, apiToken: string | undefined): void {
  if (apiToken !== undefined && apiToken.length < MIN_TOKEN_LENGTH) {
    throw new UsageError(`--api-token must be at least ${MIN_TOKEN_LENGTH} characters`);
  }
  if (!isLoopback(host) && apiToken === undefined) {
    throw new UsageError(
      `--host ${host} is reachable from other machines: give --api-token <token>, which the operator commands then require`,
    );
  }
}
