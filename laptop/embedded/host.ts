import { createWriteStream, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PartnerFaults } from "../../partner/faults.js";
import { JsonLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { startOtlpTelemetry } from "../../src/adapters/telemetry/otlp-sdk.js";
import { startOrRefuse } from "../../src/adapters/web/listen-or-refuse.js";
import { type Environment, loadPipelineSettings } from "../../src/config/settings.js";
import { loadOtlpSettings, OTLP_ENDPOINT_SETTING } from "../../src/config/telemetry-settings.js";
import { seededRandom } from "../../src/domain/backoff.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";
import { INSTRUMENTATION_SCOPE } from "../../src/telemetry/telemetry.js";
import { closeDatabase } from "../sqlite/write-batch.js";
import { followBatch } from "./batch-progress.js";
import { demoOrder } from "./demo.js";
import {
  DEMO_ENVIRONMENT,
  EMBEDDED_SYNCHRONOUS,
  type EmbeddedStack,
  startEmbeddedStack,
} from "./embedded-stack.js";
import { type HttpApi, startHttpApi } from "./http-api.js";
import { localKeys } from "./key-file.js";
import { STOREFRONT_STATUS_QUEUE, type Storefront, startEmbeddedStorefront } from "./storefront.js";

export interface HostOptions {
  readonly port: number;
  /** The address the HTTP API listens on. */
  readonly host: string;
  /** Required by the operator commands when set (and `sas start` sets it off loopback). */
  readonly apiToken?: string;
  /** Directory of the database and the log, or ":memory:". */
  readonly data: string;
  readonly demoOrders: number;
  readonly faults: PartnerFaults;
  readonly duplicateReplies: number;
  readonly seed: number;
  readonly agent: "activity" | "queue";
  /** A partner started separately (`sas partner`), instead of the simulated one on a thread. */
  readonly partnerUrl?: string;
  /** The storefront's port (on `host`), or null for no storefront. */
  readonly storePort: number | null;
  readonly env: Environment;
}

/**
 * `sas start`: the whole pipeline on the embedded host, with the simulated partner and the HTTP API,
 * a demo batch submitted and followed on the terminal, then serving until interrupted.
 */
export async function runHost(options: HostOptions): Promise<void> {
  loadPipelineSettings({ ...DEMO_ENVIRONMENT, AGENT_MODE: options.agent, ...options.env }); // fail before any I/O
  const otlp = loadOtlpSettings(options.env, INSTRUMENTATION_SCOPE);
  const sdk = otlp ? startOtlpTelemetry(otlp) : undefined;
  const telemetry = sdk ? { telemetry: sdk.telemetry } : {};
  const inMemory = options.data === ":memory:";
  if (!inMemory) mkdirSync(options.data, { recursive: true });
  // With the database in memory, the log goes to the temporary directory rather than the working one.
  const logPath = join(inMemory ? tmpdir() : options.data, inMemory ? `sas-${process.pid}.log` : "sas.log");
  const logFile = createWriteStream(logPath, { flags: "a" });
  const logger = new JsonLogger((line) => logFile.write(`${JSON.stringify(line)}\n`), "info");
  const db = openDatabase(inMemory ? ":memory:" : join(options.data, "sas.sqlite"), {
    synchronous: EMBEDDED_SYNCHRONOUS,
  });
  const keys = localKeys(options.env, options.data, new Date());
  const { pipeline, partnerControls, stop } = await startEmbeddedStack({
    ...options,
    db,
    logger,
    keyRing: keys.ring,
    ...telemetry,
  });
  const stopAll = async (servers?: Servers) => {
    await servers?.storefront?.close();
    await servers?.api.close();
    await stop();
    await sdk?.shutdown();
    closeDatabase(db);
    logFile.end();
  };
  let servers: Servers;
  try {
    servers = await startServers(options, { pipeline, partnerControls }, logger, telemetry);
  } catch (error) {
    // A port that is taken stops start-up with nothing left running.
    await stopAll();
    throw error;
  }
  const { api, storefront } = servers;

  const out = process.stdout;
  out.write(
    `embedded host: data in ${inMemory ? "memory" : options.data}, logs in ${logPath}\n` +
      `personal and payment fields sealed with the key ring from ${keys.source}\n` +
      `${describeParts(options, sdk?.destination)}\n\n` +
      describeAddresses(api, storefront),
  );

  const prefix = `demo-${Date.now().toString(36)}`;
  const random = seededRandom(options.seed);
  const batch = Array.from({ length: options.demoOrders }, (_, i) => demoOrder(prefix, i, random));
  for (const message of batch) await pipeline.post(message as unknown as JsonValue);
  if (batch.length > 0) {
    out.write(`\nsubmitted a demo batch of ${batch.length} orders\n`);
    await followBatch(
      pipeline,
      batch.map((m) => m.orderId),
      out,
    );
  }
  out.write("Ctrl-C to stop.\n");

  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  out.write("stopping...\n");
  await stopAll(servers);
}

/** Where to go: printed before the demo batch, so the addresses come first. */
function describeAddresses(api: HttpApi, storefront: Storefront | null): string {
  return (
    `serving ${api.url}: POST /api/orders, GET /api/orders/{orderId}\n` +
    `dashboard:  ${api.url}/\n` +
    (storefront
      ? `storefront: ${storefront.url}/ (orders to the orders queue, statuses back on ${STOREFRONT_STATUS_QUEUE})\n`
      : "storefront: off (--no-store)\n") +
    `partner:    its faults and outages: sas partner status|faults|outage --url ${api.url}\n` +
    `try: curl -s -X POST ${api.url}/api/orders -H 'content-type: application/json' -d '${JSON.stringify(demoOrder("ord-try", 1, seededRandom(1)))}'\n`
  );
}

/** The partner and the telemetry's destination, as the host prints them at start. */
function describeParts(options: HostOptions, telemetryDestination: string | undefined): string {
  const partner =
    options.partnerUrl === undefined
      ? `faults ${JSON.stringify(options.faults)}`
      : `at ${options.partnerUrl}`;
  const telemetry =
    telemetryDestination !== undefined
      ? `traces and metrics: ${telemetryDestination}`
      : `traces and metrics: off (set ${OTLP_ENDPOINT_SETTING} to send them to an OTLP collector)`;
  return `partner ${partner}, duplicate replies ${options.duplicateReplies}, seed ${options.seed}, agent ${options.agent}\n${telemetry}`;
}

interface Servers {
  readonly api: HttpApi;
  readonly storefront: Storefront | null;
}

/** The HTTP API, then the storefront; a port already taken is a PortInUseError naming it. */
async function startServers(
  options: HostOptions,
  { pipeline, partnerControls }: Pick<EmbeddedStack, "pipeline" | "partnerControls">,
  logger: JsonLogger,
  telemetry: { telemetry?: Telemetry },
): Promise<Servers> {
  const api = await startOrRefuse(
    () =>
      startHttpApi({
        port: options.port,
        host: options.host,
        ...(options.apiToken !== undefined ? { apiToken: options.apiToken } : {}),
        logger,
        backend: pipeline.apiBackend(),
        partner: partnerControls,
        ...telemetry,
      }),
    { port: options.port, host: options.host, remedy: "choose another with --port" },
  );
  const storePort = options.storePort;
  if (storePort === null) return { api, storefront: null };
  try {
    const storefront = await startOrRefuse(
      () => startEmbeddedStorefront({ ...options, pipeline, port: storePort, logger }),
      { port: storePort, host: options.host, remedy: "choose another with --store-port (or --no-store)" },
    );
    return { api, storefront };
  } catch (error) {
    await api.close();
    throw error;
  }
}
