/**
 * One run of the engines yardstick: the built app under `sas host --durable <engine>` on fresh data and
 * free ports, against stand-ins the bench starts and counts (Azurite behind a counting proxy, the Cosmos
 * DB stand-in, the Service Bus broker, the simulated partner), N orders sent with `sas send`, timed from
 * the start of `sas send` until every record is final. Then the run's CPU, the durable history's rows, the
 * partner's effects and the storage requests are read.
 */

import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { freePorts } from "../laptop/http/free-ports.js";
import { AZURITE_ACCOUNT_KEY, startAzuriteStorage } from "../laptop/stand-ins/azurite.js";
import { tableRows } from "../laptop/stand-ins/azurite-tables.js";
import { startPartnerService } from "../partner/partner-service.js";
import { SystemClock } from "../src/adapters/clock/system-clock.js";
import { ORDER_STEPS } from "../src/domain/workflow.js";
import type { Logger } from "../src/ports/logger.js";
import { recordsReader, untilFinal, untilIdle } from "./azure-work.js";
import { layoutOf, writeLocalSettings } from "./checkout-app.js";
import { startCountingCosmos } from "./cosmos-counter.js";
import { sendOrders, startHost } from "./host-child.js";
import { childrenMatching, cpuSince, type ProcessCpu, treeCpu } from "./process-tree-cpu.js";
import { startCountingServiceBus } from "./service-bus-counter.js";
import { type StorageCounts, startCountingStorage } from "./storage-counter.js";

export type EngineName = "local" | "extension";

export interface EngineRun {
  readonly engine: EngineName;
  readonly orders: number;
  /** From the start of `sas send` to the moment every record was final. */
  readonly seconds: number;
  /** CPU over those seconds, in ms. */
  readonly cpu: {
    /** `sas host` and what it started (the .NET extension host), by process name. */
    readonly host: Readonly<Record<string, number>>;
    /** Azurite's process. */
    readonly azurite: number;
    /** The bench's process: the broker, the Cosmos DB stand-in, the partner, the proxy, its polling. */
    readonly benchStandIns: number;
  };
  /** Rows of the durable history once idle: the task hub's History table, or the local store's df_history. */
  readonly historyRows: number;
  readonly states: Readonly<Record<string, number>>;
  /** The partner's ledger: orders with each of their effects applied exactly once and never undone. */
  readonly effects: { readonly orders: number; readonly once: number; readonly duplicates: number };
  /** Requests Azurite served through the proxy over the same seconds. */
  readonly storage: StorageCounts;
}

const HUB = "BenchHub";
const DATABASE = "orders";
/** The deployment's schedules (infra/modules/function-app.bicep): the starter is nudged, not polled. */
const DEPLOYED_SCHEDULE = "0 */5 * * * *";
const IDLE_WAIT_MS = 30_000;

const QUIET: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => QUIET };

export interface EngineRunOptions {
  readonly checkout: string;
  /** The app built once for the sitting (bench/checkout-app.ts); its local.settings.json is rewritten. */
  readonly appRoot: string;
  readonly engine: EngineName;
  readonly orders: number;
  readonly log: (line: string) => void;
}

export async function runEngine(options: EngineRunOptions): Promise<EngineRun> {
  const folder = mkdtempSync(join(tmpdir(), `sas-engines-${options.engine}-`));
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const data = join(folder, "host");
    mkdirSync(data);
    const azurite = await startAzuriteStorage({ location: join(folder, "azurite") });
    stops.push(() => azurite.stop());
    const proxy = await startCountingStorage({
      blob: portOf(azurite.blobEndpoint),
      queue: portOf(azurite.queueEndpoint),
      table: portOf(azurite.tableEndpoint),
    });
    stops.push(() => proxy.stop());
    const cosmos = await startCountingCosmos();
    stops.push(() => cosmos.stop());
    const serviceBus = await startCountingServiceBus(options.checkout);
    stops.push(() => serviceBus.stop());
    const accessKey = randomBytes(24).toString("base64url");
    const partner = await startPartnerService({ accessKey, clock: new SystemClock(), logger: QUIET });
    stops.push(() => partner.close());
    const storage = (service: string, port: number) =>
      `${service}Endpoint=http://127.0.0.1:${port}/devstoreaccount1;`;
    writeLocalSettings(options.checkout, options.appRoot, {
      CosmosDb__endpoint: `${cosmos.endpoint}/`,
      CosmosDb__key: "stand-in-accepts-any-key",
      CosmosDb__database: DATABASE,
      ServiceBusConnection: serviceBus.connectionString,
      AzureWebJobsStorage: `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${AZURITE_ACCOUNT_KEY};${storage("Blob", proxy.ports.blob)}${storage("Queue", proxy.ports.queue)}${storage("Table", proxy.ports.table)}`,
      TASKHUB_NAME: HUB,
      PARTNER_URL: partner.url,
      PARTNER_ACCESS_KEY: accessKey,
      STARTER_SCHEDULE: DEPLOYED_SCHEDULE,
      SUPERVISOR_SCHEDULE: DEPLOYED_SCHEDULE,
      AGENT_MODE: "activity",
    });
    const layout = {
      ...layoutOf(options.checkout),
      hostFlags: ["--no-store", "--durable", options.engine, "--no-summary"],
    };
    const { port } = await freePorts(["port"]);
    const host = await startHost({ ...options, layout, port, data, timeoutMs: 300_000 });
    stops.unshift(() => host.stop());
    options.log(`${options.engine}: sas host on ${host.url}; sending ${options.orders} orders`);
    const meters = startMeters(host.pid, proxy.counts);
    const sent = await sendOrders({ ...options, layout, seed: Date.now() % 1_000_000 });
    const records = recordsReader(cosmos.endpoint);
    const timeoutMs = Math.max(300, options.orders) * 1_000;
    const states = await untilFinal(() => records.states(), sent, timeoutMs, options.log).finally(() =>
      records.dispose(),
    );
    const measured = meters.read();
    await untilEngineIdle(options.engine, data, azurite.tableEndpoint);
    const historyRows = await countHistory(options.engine, data, azurite.tableEndpoint);
    const effects = await effectsAtPartner(partner.url, accessKey);
    return { engine: options.engine, orders: sent, states, historyRows, effects, ...measured };
  } finally {
    for (const stop of stops) await stop().catch(() => {});
    rmSync(folder, { recursive: true, force: true, maxRetries: 10 });
  }
}

function portOf(endpoint: string): number {
  return Number(new URL(endpoint).port);
}

/** CPU and storage requests from now until `read`. */
function startMeters(hostPid: number | undefined, storage: () => StorageCounts) {
  const started = performance.now();
  const hostBefore = hostPid === undefined ? [] : treeCpu(hostPid);
  const azuritePids = childrenMatching("azurite");
  const azuriteBefore = azuritePids.flatMap((pid) => treeCpu(pid));
  const benchBefore = process.cpuUsage();
  const storageBefore = storage();
  return {
    read() {
      const seconds = (performance.now() - started) / 1_000;
      const bench = process.cpuUsage(benchBefore);
      const host = hostPid === undefined ? [] : cpuSince(hostBefore, treeCpu(hostPid));
      const azurite = cpuSince(
        azuriteBefore,
        azuritePids.flatMap((pid) => treeCpu(pid)),
      );
      return {
        seconds,
        cpu: {
          host: byName(host),
          azurite: sum(azurite),
          benchStandIns: (bench.user + bench.system) / 1_000,
        },
        storage: storageDifference(storage(), storageBefore),
      };
    },
  };
}

function byName(processes: readonly ProcessCpu[]): Record<string, number> {
  const named: Record<string, number> = {};
  for (const p of processes) named[p.name] = (named[p.name] ?? 0) + p.ms;
  return named;
}

function sum(processes: readonly ProcessCpu[]): number {
  return processes.reduce((total, p) => total + p.ms, 0);
}

export function storageDifference(after: StorageCounts, before: StorageCounts): StorageCounts {
  const byOperation: Record<string, number> = {};
  for (const [kind, n] of Object.entries(after.byOperation)) {
    const left = n - (before.byOperation[kind] ?? 0);
    if (left !== 0) byOperation[kind] = left;
  }
  return {
    byService: {
      blob: after.byService.blob - before.byService.blob,
      queue: after.byService.queue - before.byService.queue,
      table: after.byService.table - before.byService.table,
    },
    byOperation,
    total: after.total - before.total,
  };
}

/** Waits (at most 30 s) until the engine has no orchestration left running, so its history is whole. */
async function untilEngineIdle(engine: EngineName, data: string, tableEndpoint: string): Promise<void> {
  if (engine === "local") return untilIdle(join(data, "durable.db"), IDLE_WAIT_MS);
  const deadline = Date.now() + IDLE_WAIT_MS;
  while (Date.now() < deadline) {
    const instances = await tableRows(tableEndpoint, `${HUB}Instances`, { select: "RuntimeStatus" });
    if (!instances.some((row) => row.RuntimeStatus === "Running" || row.RuntimeStatus === "Pending")) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function countHistory(engine: EngineName, data: string, tableEndpoint: string): Promise<number> {
  if (engine === "extension")
    return (await tableRows(tableEndpoint, `${HUB}History`, { select: "RowKey" })).length;
  const db = new Database(join(data, "durable.db"), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM df_history").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** From the partner's ledger: the orders it saw, those with all four effects applied once, the extra applications. */
async function effectsAtPartner(url: string, key: string): Promise<EngineRun["effects"]> {
  const response = await fetch(`${url}/ledger`, { headers: { "x-partner-key": key } });
  if (!response.ok) throw new Error(`the partner's ledger: ${response.status}`);
  const ledger = (await response.json()) as {
    byOrder: Record<string, { effects: Record<string, { applied: number; undone: number } | undefined> }>;
  };
  const orders = Object.values(ledger.byOrder);
  const once = orders.filter((order) =>
    ORDER_STEPS.every((e) => order.effects[e]?.applied === 1 && order.effects[e]?.undone === 0),
  ).length;
  const duplicates = orders
    .flatMap((order) => Object.values(order.effects))
    .reduce((total, e) => total + Math.max(0, (e?.applied ?? 0) - 1), 0);
  return { orders: orders.length, once, duplicates };
}
