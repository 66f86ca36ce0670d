/**
 * The work a batch of orders costs on the Azure path, counted on a laptop: a checkout's own `sas host`
 * (its Azure Functions app built as `npm run build` builds it) runs in a child process against a
 * Cosmos DB stand-in and a Service Bus broker that the bench starts and counts, so two builds are
 * counted the same way. `sas send` puts the orders on the orders queue; once every record is final
 * and the durable runtime has nothing left to do, the host is stopped, and its durable store, the
 * partner's ledger and the two counters say what the batch cost. Everything the host did before the
 * first order was sent (creating containers, reading metadata) is left out.
 */

import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CosmosClient } from "@azure/cosmos";
import Database from "better-sqlite3";
import { freePorts } from "../laptop/http/free-ports.js";
import { AZURITE_ACCOUNT_KEY } from "../laptop/stand-ins/azurite.js";
import { buildApp, type CheckoutLayout, layoutOf, writeLocalSettings } from "./checkout-app.js";
import { type CountingCosmos, startCountingCosmos, UNCOUNTED } from "./cosmos-counter.js";
import type { CosmosCounts } from "./cosmos-requests.js";
import { type HostChild, sendOrders, startHost } from "./host-child.js";
import {
  type CountingServiceBus,
  type ServiceBusCounts,
  startCountingServiceBus,
} from "./service-bus-counter.js";
import { countDurableWork, type DurableWork } from "./work-counts.js";

export interface AzureWork {
  readonly orders: number;
  /** From the first order sent to the moment every record was final. */
  readonly seconds: number;
  readonly cosmos: CosmosCounts;
  /** What the broker did for the batch; null when it could not be counted. */
  readonly serviceBus: ServiceBusCounts | null;
  /** From the host's SQLite durable store; its `orders` and `stateWrites` are not the host's to count. */
  readonly durable: DurableWork | null;
  /** Well-formed calls the partner stand-in saw (its ledger's `calls`), or null when it could not say. */
  readonly partnerCalls: number | null;
  /** The final states the orders reached. */
  readonly states: Readonly<Record<string, number>>;
}

export interface AzureWorkOptions {
  /** The repository whose `sas host` runs: this one, or another build's checkout. */
  readonly checkout: string;
  readonly orders: number;
  /** AGENT_MODE: the Agents called from activities (the sample's) or through their queues. */
  readonly agentMode?: "activity" | "queue";
  /** How long the orders may take to become final (default: 180 s, or 0.5 s an order if longer). */
  readonly timeoutSeconds?: number;
  readonly log?: (line: string) => void;
}

export const TERMINAL = ["Processed", "Compensated", "Error", "CompensationFailed"];
const DATABASE = "orders";
const RECORDS_CONTAINER = "orderState";
/** The deployment's schedules (infra/modules/function-app.bicep): the starter is nudged, not polled. */
const DEPLOYED_SCHEDULE = "0 */5 * * * *";
/** How long to wait for the durable runtime to run out of work once every record is final. */
const IDLE_WAIT_MS = 30_000;

export async function measureAzureWork(options: AzureWorkOptions): Promise<AzureWork> {
  const log = options.log ?? (() => {});
  const layout = layoutOf(options.checkout);
  const folder = mkdtempSync(join(tmpdir(), "sas-azure-work-"));
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const appRoot = join(folder, "app");
    const data = join(folder, "data");
    mkdirSync(appRoot);
    mkdirSync(data);
    log(`building the app of ${options.checkout}`);
    buildApp(options.checkout, appRoot);
    const cosmos = await startCountingCosmos();
    stops.push(() => cosmos.stop());
    const serviceBus = await startCountingServiceBus(options.checkout);
    stops.push(() => serviceBus.stop());
    const ports = await freePorts(["partner", "blob", "host"]);
    const partner = {
      url: `http://127.0.0.1:${ports.partner}`,
      key: randomBytes(24).toString("base64url"),
    };
    writeLocalSettings(options.checkout, appRoot, {
      ...settingsFor(cosmos, serviceBus, partner, ports.blob),
      AGENT_MODE: options.agentMode ?? "activity",
    });
    const host = await startHost({
      checkout: options.checkout,
      layout,
      appRoot,
      port: ports.host,
      data,
    });
    stops.unshift(() => host.stop());
    log(`sas host on ${host.url}; sending ${options.orders} orders`);
    return await runBatch({ ...options, layout, appRoot, data, cosmos, serviceBus, host, partner, log });
  } finally {
    for (const stop of stops) await stop().catch(() => {});
    rmSync(folder, { recursive: true, force: true, maxRetries: 10 });
  }
}

interface Batch extends AzureWorkOptions {
  readonly layout: CheckoutLayout;
  readonly appRoot: string;
  readonly data: string;
  readonly cosmos: CountingCosmos;
  readonly serviceBus: CountingServiceBus;
  readonly host: HostChild;
  readonly partner: { readonly url: string; readonly key: string };
  readonly log: (line: string) => void;
}

/** Sends the orders, waits for them, stops the host, and counts what the batch did. */
async function runBatch(batch: Batch): Promise<AzureWork> {
  const cosmosBefore = batch.cosmos.counts();
  const serviceBusBefore = batch.serviceBus.counts();
  const started = performance.now();
  const seed = Date.now() % 1_000_000;
  const sent = await sendOrders({ ...batch, seed });
  const records = recordsReader(batch.cosmos.endpoint);
  try {
    const timeoutMs = (batch.timeoutSeconds ?? Math.max(180, Math.ceil(batch.orders / 2))) * 1_000;
    const states = await untilFinal(() => records.states(), sent, timeoutMs, batch.log);
    const seconds = (performance.now() - started) / 1_000;
    await untilIdle(join(batch.data, "durable.db"), IDLE_WAIT_MS);
    const cosmos = cosmosDifference(batch.cosmos.counts(), cosmosBefore);
    const serviceBus = serviceBusDifference(batch.serviceBus.counts(), serviceBusBefore);
    const partnerCalls = await ledgerCalls(batch.partner);
    const code = await batch.host.stop();
    if (code !== 0) batch.log(`sas host exited with ${code}`);
    return {
      orders: sent,
      seconds,
      cosmos,
      serviceBus,
      durable: durableWork(batch.data),
      partnerCalls,
      states,
    };
  } finally {
    records.dispose();
  }
}

function settingsFor(
  cosmos: CountingCosmos,
  serviceBus: CountingServiceBus,
  partner: { readonly url: string; readonly key: string },
  blobPort: number,
): Record<string, string> {
  const blob = `http://127.0.0.1:${blobPort}/devstoreaccount1`;
  return {
    CosmosDb__endpoint: `${cosmos.endpoint}/`,
    CosmosDb__key: "stand-in-accepts-any-key",
    CosmosDb__database: DATABASE,
    CosmosDb__allowSelfSignedCertificate: "true",
    ServiceBusConnection: serviceBus.connectionString,
    // Azurite's public development account; it works only against the emulator.
    AzureWebJobsStorage: `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${AZURITE_ACCOUNT_KEY};BlobEndpoint=${blob};`,
    PARTNER_URL: partner.url,
    PARTNER_ACCESS_KEY: partner.key,
    STARTER_SCHEDULE: DEPLOYED_SCHEDULE,
    SUPERVISOR_SCHEDULE: DEPLOYED_SCHEDULE,
  };
}

/** The records' states, read by a client the counter leaves out. */
export function recordsReader(endpoint: string) {
  const client = new CosmosClient({
    endpoint,
    key: "stand-in-accepts-any-key",
    userAgentSuffix: UNCOUNTED,
    connectionPolicy: { enableEndpointDiscovery: false },
    agent: new Agent({ rejectUnauthorized: false, keepAlive: true }),
  });
  const container = client.database(DATABASE).container(RECORDS_CONTAINER);
  return {
    async states(): Promise<Record<string, number>> {
      const query = "SELECT c.processState FROM c WHERE IS_DEFINED(c.processState)";
      const { resources } = await container.items.query<{ processState: string }>(query).fetchAll();
      const byState: Record<string, number> = {};
      for (const { processState } of resources) byState[processState] = (byState[processState] ?? 0) + 1;
      return byState;
    },
    dispose: () => client.dispose(),
  };
}

/** Polls until `orders` records are in a final state; throws with what it saw at the deadline. */
export async function untilFinal(
  read: () => Promise<Record<string, number>>,
  orders: number,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let states: Record<string, number> = {};
  let reported = Date.now();
  while (Date.now() < deadline) {
    states = await read().catch(() => states);
    const final = TERMINAL.reduce((sum, state) => sum + (states[state] ?? 0), 0);
    if (final >= orders) return states;
    if (Date.now() - reported > 10_000) {
      log(`${final} of ${orders} orders final`);
      reported = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`not every order became final in ${timeoutMs / 1_000} s: ${JSON.stringify(states)}`);
}

/** Waits (at most `timeoutMs`) until no instance is running and no event or activity is waiting. */
export async function untilIdle(file: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const pending = db.prepare(
      `SELECT (SELECT count(*) FROM df_inbox) + (SELECT count(*) FROM df_activities)
        + (SELECT count(*) FROM df_instances WHERE status IN ('Pending', 'Running')) AS n`,
    );
    while (Date.now() < deadline && (pending.get() as { n: number }).n > 0) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    db.close();
  }
}

function durableWork(data: string): DurableWork | null {
  try {
    return countDurableWork(join(data, "durable.db"));
  } catch {
    return null;
  }
}

/** The partner stand-in's count of well-formed calls, from its ledger. */
export async function ledgerCalls(partner: {
  readonly url: string;
  readonly key: string;
}): Promise<number | null> {
  try {
    const response = await fetch(`${partner.url}/ledger`, { headers: { "x-partner-key": partner.key } });
    if (!response.ok) return null;
    return ((await response.json()) as { totals: { calls: number } }).totals.calls;
  } catch {
    return null;
  }
}

function minus(after: Readonly<Record<string, number>>, before: Readonly<Record<string, number>>) {
  const result: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const left = value - (before[key] ?? 0);
    if (left !== 0) result[key] = left;
  }
  return result;
}

/** The counts of what happened between two snapshots of the Cosmos DB counter. */
export function cosmosDifference(after: CosmosCounts, before: CosmosCounts): CosmosCounts {
  return {
    byKind: minus(after.byKind, before.byKind),
    requests: after.requests - before.requests,
    requestUnitsEstimate: after.requestUnitsEstimate - before.requestUnitsEstimate,
    requestUnitsByKind: minus(after.requestUnitsByKind, before.requestUnitsByKind),
    bytesWritten: minus(after.bytesWritten, before.bytesWritten),
  };
}

export function serviceBusDifference(after: ServiceBusCounts, before: ServiceBusCounts): ServiceBusCounts {
  return { byKind: minus(after.byKind, before.byKind), operations: after.operations - before.operations };
}
