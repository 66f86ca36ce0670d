import { lookup } from "node:dns/promises";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { createCosmosClient, ensureStateContainers } from "../../src/adapters/cosmos/cosmos-client.js";
import { type ListenPlace, startOrRefuse } from "../../src/adapters/web/listen-or-refuse.js";
import { CONNECTION_NAMES, PARTNER_ACCESS_KEY_SETTING, PARTNER_URL_SETTING } from "../../src/config/names.js";
import { SettingsError } from "../../src/config/settings.js";
import { isoDurationMs } from "../../src/domain/time.js";
import type { Logger } from "../../src/ports/logger.js";
import { newAccessKey } from "../http/access-key.js";
import { answers } from "../http/port-probe.js";

/** A stand-in `sas host` started, or a service it found already answering where the settings point. */
export interface StandIn {
  readonly name: string;
  /** What `sas host` says about it on start. */
  readonly description: string;
  /** Settings the app needs to use it, beside the ones given (the partner's access key). */
  readonly settings?: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

export interface StandInOptions {
  readonly settings: Readonly<Record<string, string>>;
  /** The app's root, where infra/queues.json defines the queues. */
  readonly appRoot: string;
  /** The data folder; Azurite's blobs and the partner's ledger are kept there. */
  readonly data: string;
  readonly logger: Logger;
  /**
   * The Durable Task extension keeps its task hub in the `AzureWebJobsStorage` account: Azurite's queue
   * and table services are started too, on the connection's endpoints.
   */
  readonly durableStorage?: boolean;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/**
 * Starts a stand-in for each service whose setting points at this machine and where nothing answers
 * yet: the Service Bus broker, the Cosmos DB stand-in, Azurite's blob service and the simulated partner.
 * A setting that points elsewhere, or at a port where something already listens (the real emulator),
 * is used as it is. Stops whatever it started if one fails.
 */
export async function startStandIns(options: StandInOptions): Promise<StandIn[]> {
  const started: StandIn[] = [];
  try {
    for (const start of [serviceBus, cosmos, storage, partner]) {
      const standIn = await start(options);
      if (standIn) started.push(standIn);
    }
  } catch (error) {
    await stopAll(started);
    throw error;
  }
  return started;
}

export async function stopAll(standIns: readonly StandIn[]): Promise<void> {
  for (const standIn of [...standIns].reverse()) await standIn.stop();
}

/** A loopback host and port from a URL-like endpoint, or undefined when it points elsewhere. */
function loopbackAddress(endpoint: string | undefined, defaultPort: number) {
  if (!endpoint) return undefined;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return undefined;
  }
  if (!LOOPBACK.has(url.hostname)) return undefined;
  return { hostname: url.hostname.replace(/^\[|\]$/g, ""), port: url.port ? Number(url.port) : defaultPort };
}

/** The address a client resolving `hostname` reaches first, so the stand-in listens where it connects. */
async function listenAddress(hostname: string): Promise<string> {
  return hostname === "localhost" ? (await lookup("localhost")).address : hostname;
}

function connectionStringPart(connectionString: string, key: string): string | undefined {
  for (const part of connectionString.split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim().toLowerCase() === key.toLowerCase())
      return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * A stand-in's address, for the refusal when its port is taken after all: nothing answered there a
 * moment before, yet the listen found it held.
 */
function standInPlace(name: string, host: string, port: number, setting: string): ListenPlace {
  return { port, host, subject: `the ${name} stand-in's port`, remedy: `point ${setting} at another port` };
}

function alreadyThere(name: string, where: string): StandIn {
  return { name, description: `${name}: using the one answering at ${where}`, stop: async () => {} };
}

async function serviceBus(options: StandInOptions): Promise<StandIn | undefined> {
  const connection = options.settings[CONNECTION_NAMES.serviceBus];
  if (!connection || connectionStringPart(connection, "UseDevelopmentEmulator") !== "true") return undefined;
  const endpoint = connectionStringPart(connection, "Endpoint")?.replace(/^sb:/, "amqp:");
  const address = loopbackAddress(endpoint, 5672);
  if (!address) return undefined;
  const host = await listenAddress(address.hostname);
  if (await answers(host, address.port)) return alreadyThere("Service Bus", `${host}:${address.port}`);
  const { ServiceBusStandIn } = await import("../stand-ins/servicebus-broker/index.js");
  const file = join(options.data, "servicebus.db");
  const broker = await startOrRefuse(
    () => ServiceBusStandIn.start({ host, port: address.port, file }),
    standInPlace("Service Bus", host, address.port, `${CONNECTION_NAMES.serviceBus}'s Endpoint`),
  );
  for (const queue of queueDefinitions(options.appRoot)) {
    broker.createQueue(queue.name, {
      lockDurationMs: isoDurationMs(queue.lockDuration),
      maxDeliveryCount: queue.maxDeliveryCount,
      duplicateDetectionWindowMs: isoDurationMs(queue.duplicateDetectionHistoryTimeWindow),
    });
  }
  return {
    name: "Service Bus",
    description: `Service Bus: the in-process AMQP broker on ${host}:${address.port}, queues from infra/queues.json, messages in ${file}`,
    stop: () => broker.close(),
  };
}

interface QueueDefinition {
  readonly name: string;
  readonly lockDuration: string;
  readonly maxDeliveryCount: number;
  readonly duplicateDetectionHistoryTimeWindow: string;
}

function queueDefinitions(appRoot: string): QueueDefinition[] {
  const queues = JSON.parse(readFileSync(join(appRoot, "infra", "queues.json"), "utf8")) as Record<
    string,
    QueueDefinition
  >;
  return Object.values(queues);
}

async function cosmos(options: StandInOptions): Promise<StandIn | undefined> {
  const endpoint = options.settings[`${CONNECTION_NAMES.cosmos}__endpoint`];
  const key = options.settings[`${CONNECTION_NAMES.cosmos}__key`];
  const address = loopbackAddress(endpoint, 8081);
  if (!address || !key) return undefined;
  const host = await listenAddress(address.hostname);
  const database = options.settings[`${CONNECTION_NAMES.cosmos}__database`] ?? "orders";
  const connection = {
    endpoint: `https://${address.hostname}:${address.port}`,
    key,
    allowSelfSignedCertificate: true,
  };
  if (await answers(host, address.port)) {
    await ensureStateContainers(createCosmosClient(connection), database);
    return alreadyThere("Cosmos DB", `${host}:${address.port}`);
  }
  const { startCosmosServer } = await import("../stand-ins/cosmos-server.js");
  const journal = join(options.data, "cosmos-writes.ndjson");
  const server = await startOrRefuse(
    () => startCosmosServer({ host, port: address.port, journal }),
    standInPlace("Cosmos DB", host, address.port, `${CONNECTION_NAMES.cosmos}__endpoint`),
  );
  const client = createCosmosClient(connection);
  await ensureStateContainers(client, database);
  client.dispose();
  return {
    name: "Cosmos DB",
    description: `Cosmos DB: the stand-in on https://${host}:${address.port}, database ${database}, its writes journaled in ${journal}`,
    stop: () => server.stop(),
  };
}

/** Azurite's fixed development-storage addresses, which `UseDevelopmentStorage=true` means. */
const DEVELOPMENT_STORAGE = {
  blob: { hostname: "127.0.0.1", port: 10000 },
  queue: { hostname: "127.0.0.1", port: 10001 },
  table: { hostname: "127.0.0.1", port: 10002 },
};

type StorageService = keyof typeof DEVELOPMENT_STORAGE;

/** Where the connection points each service it needs, when on this machine; undefined when elsewhere. */
function storageAddresses(connection: string, services: readonly StorageService[]) {
  if (connectionStringPart(connection, "UseDevelopmentStorage") === "true") return DEVELOPMENT_STORAGE;
  const endpoint = (service: StorageService) =>
    connectionStringPart(connection, `${service[0]?.toUpperCase()}${service.slice(1)}Endpoint`);
  const blob = loopbackAddress(endpoint("blob"), 10000);
  if (!blob) return undefined;
  const missing = services.filter((service) => !loopbackAddress(endpoint(service), 0));
  if (missing.length > 0) {
    throw new SettingsError([
      `${CONNECTION_NAMES.storage}: the Durable Task extension keeps its task hub in queues and tables, and the connection names no loopback ${missing.map((service) => `${service[0]?.toUpperCase()}${service.slice(1)}Endpoint`).join(" or ")}: give them (or UseDevelopmentStorage=true), or run sas host with --durable local`,
    ]);
  }
  return {
    blob,
    queue: loopbackAddress(endpoint("queue"), 10001) ?? DEVELOPMENT_STORAGE.queue,
    table: loopbackAddress(endpoint("table"), 10002) ?? DEVELOPMENT_STORAGE.table,
  };
}

async function storage(options: StandInOptions): Promise<StandIn | undefined> {
  const connection = options.settings[CONNECTION_NAMES.storage];
  if (!connection) return undefined;
  const services: StorageService[] = options.durableStorage ? ["blob", "queue", "table"] : ["blob"];
  const addresses = storageAddresses(connection, services);
  if (!addresses) return undefined;
  const host = await listenAddress(addresses.blob.hostname);
  const answering = await Promise.all(services.map((service) => answers(host, addresses[service].port)));
  const where = services.map((service) => `${host}:${addresses[service].port}`).join(", ");
  if (answering.every(Boolean))
    return alreadyThere(options.durableStorage ? "Storage" : "Blob Storage", where);
  const location = join(options.data, "azurite");
  if (!options.durableStorage) {
    const { startAzuriteBlob } = await import("../stand-ins/azurite.js");
    const azurite = await startOrRefuse(
      () => startAzuriteBlob({ host, port: addresses.blob.port, location }),
      standInPlace("Blob Storage", host, addresses.blob.port, `${CONNECTION_NAMES.storage}'s BlobEndpoint`),
    );
    return {
      name: "Blob Storage",
      description: `Blob Storage: Azurite on ${azurite.blobEndpoint}, data in ${location}`,
      stop: () => azurite.stop(),
    };
  }
  if (answering.some(Boolean)) {
    throw new SettingsError([
      `${CONNECTION_NAMES.storage}: something answers on some of ${where} but not all: stop it, or point the connection at a storage emulator with blob, queue and table services`,
    ]);
  }
  const { startAzuriteStorage } = await import("../stand-ins/azurite.js");
  const ports = { blob: addresses.blob.port, queue: addresses.queue.port, table: addresses.table.port };
  const azurite = await startOrRefuse(
    () => startAzuriteStorage({ host, ports, location }),
    standInPlace("Storage", host, addresses.blob.port, CONNECTION_NAMES.storage),
  );
  return {
    name: "Storage",
    description: `Storage: Azurite's blob, queue and table services on ${azurite.blobEndpoint}, ${azurite.queueEndpoint}, ${azurite.tableEndpoint}, data in ${location}`,
    stop: () => azurite.stop(),
  };
}

async function partner(options: StandInOptions): Promise<StandIn | undefined> {
  const address = loopbackAddress(options.settings[PARTNER_URL_SETTING], 80);
  if (!address) return undefined;
  const host = await listenAddress(address.hostname);
  if (await answers(host, address.port)) return alreadyThere("Partner", `${host}:${address.port}`);
  const { startPartnerService } = await import("../../partner/partner-service.js");
  const { openLedgerFile } = await import("../../partner/ledger-file.js");
  // The stand-in wants an access key, as the partner in Azure does: the settings' own, or one for this start.
  const givenKey = options.settings[PARTNER_ACCESS_KEY_SETTING]?.trim();
  const accessKey = givenKey || newAccessKey(32);
  const file = openLedgerFile(join(options.data, "partner-ledger.db"));
  const service = await startOrRefuse(
    () =>
      startPartnerService({
        host,
        port: address.port,
        accessKey,
        ledger: file.ledger,
        clock: new SystemClock(),
        logger: options.logger,
      }),
    standInPlace("Partner", host, address.port, PARTNER_URL_SETTING),
  ).catch((error: unknown) => {
    file.close();
    throw error;
  });
  return {
    name: "Partner",
    description: `Partner: the simulated partner on ${service.url} without faults (sas partner has them), ledger in ${options.data}, access key ${givenKey ? `from ${PARTNER_ACCESS_KEY_SETTING}` : "new for this start"}`,
    settings: givenKey ? {} : { [PARTNER_ACCESS_KEY_SETTING]: accessKey },
    stop: async () => {
      await service.close();
      file.close();
    },
  };
}
