import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import type { ServiceBusClient } from "@azure/service-bus";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { createServiceBusClient } from "../../src/adapters/servicebus/service-bus-client.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { HOSTED_ORDERS, loadAzureSettings } from "../../src/config/azure-settings.js";
import { DATA_PROTECTION_KEYS_SETTING } from "../../src/config/data-protection.js";
import { CONNECTION_NAMES } from "../../src/config/names.js";
import { SettingsError } from "../../src/config/settings.js";
import type { Logger } from "../../src/ports/logger.js";
import { localKeys } from "../embedded/key-file.js";
import { freePorts } from "../http/free-ports.js";
import { SqliteOrdersRepository } from "../sqlite/sqlite-orders-repository.js";
import type { BindingData } from "../worker/invocation-context.js";
import { captureRegistrations, type FunctionRegistry, triggerOf } from "../worker/registration-capture.js";
import { type DurableEngineName, startDurableEngine } from "./durable-engines.js";
import { type HostJson, hostKeys, hostSettings, readHostJson, resolverOf } from "./host-config.js";
import { checkStorePort, hostedStorefrontSettings, startHostedStorefront } from "./hosted-storefront.js";
import { type HostKeys, startHttpTriggers } from "./http-triggers.js";
import { startServiceBusTriggers } from "./service-bus-triggers.js";
import { embeddedOrders } from "./sql-choice.js";
import { type StandIn, startStandIns, stopAll } from "./stand-ins.js";
import { startTimerTriggers } from "./timer-triggers.js";

export interface FunctionsHostOptions {
  /** The app's root: package.json (its `main` is the built app), host.json, local.settings.json. */
  readonly appRoot: string;
  /** Where the durable store, the orders file, Azurite's data, the partner's ledger and the keys live. */
  readonly data: string;
  readonly port: number;
  readonly host: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** Serve the storefront (storefront/main.ts's code) on this port of `host`; absent: no storefront. */
  readonly store?: { readonly port: number };
  /** The engine the orchestrations run on (docs/functions-host.md); default the local one. */
  readonly durable?: DurableEngineName;
  /** A line to show the user while starting (the extension host's first build). */
  readonly say?: (line: string) => void;
  /** Where the extension host's own log lines (JSON, one a line) go; default this process's standard error. */
  readonly log?: NodeJS.WritableStream;
  /** Something the host cannot go on without stopped after start (the extension host's process). */
  readonly onFailure?: (error: Error) => void;
}

export interface FunctionsHost {
  readonly url: string;
  readonly keys: HostKeys;
  /** The storefront's base URL, or null when it was not asked for. */
  readonly storeUrl: string | null;
  /** One line per stand-in and per choice made, for the start-up banner. */
  readonly notes: readonly string[];
  close(): Promise<void>;
}

/** The trigger types this host runs; any other stops it at start with the function's name. */
const RUN_HERE = new Set([
  "httpTrigger",
  "serviceBusTrigger",
  "timerTrigger",
  "orchestrationTrigger",
  "activityTrigger",
]);

/**
 * Plays the Functions host's part for the built app: its settings set as environment variables, its
 * registrations captured as it loads, each trigger fed (HTTP, Service Bus, timers, and orchestrations
 * and activities on the durable engine chosen: Microsoft's extension, or the local durable runtime
 * behind the extension's HTTP API), with stand-ins for the services its settings point at on this machine.
 */
export async function startFunctionsHost(options: FunctionsHostOptions): Promise<FunctionsHost> {
  const { appRoot, logger } = options;
  mkdirSync(options.data, { recursive: true });
  const given = hostSettings(appRoot, options.env);
  const sql = await embeddedOrders(given, options.data);
  const dataKeys = localKeys(given, options.data, new Date());
  const settings = withoutSettings({ ...given, [DATA_PROTECTION_KEYS_SETTING]: dataKeys.text }, sql.removed);
  const clock = new SystemClock();
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    if (sql.file) closers.push(handOrders(sql.file, clock));
    checkSettings(settings, appRoot);
    const storefront = await plannedStorefront(options, settings);
    const resolve = resolverOf(settings);
    const hostJson = readHostJson(appRoot, resolve);
    const durable = options.durable ?? "local";
    const standIns = await startStandIns({
      ...{ settings, appRoot, data: options.data, logger },
      durableStorage: durable === "extension",
    });
    closers.push(() => stopAll(standIns));
    const appSettings = { ...settings, ...standInSettings(standIns) };
    setEnvironment(appSettings, sql.removed);
    const keys = hostKeys(options.data);
    const registry = await loadApp(appRoot);
    // The management links name the HTTP port, which the extension is told before the port listens.
    const port = options.port || (await freePorts(["http"])).http;
    const engine = await startDurableEngine(durable, {
      ...{ registry, appRoot, data: options.data, hostJson, clock, logger },
      webhookKey: keys.durableTaskKey,
      origin: originOf(options.host, port),
      settings: appSettings,
      say: options.say ?? (() => {}),
      ...(options.log ? { log: options.log } : {}),
      onFailure: options.onFailure ?? (() => {}),
    });
    closers.push(() => engine.close());
    const { bindingData } = engine;
    startBackgroundTriggers(registry, { settings, resolve, hostJson, clock, bindingData, logger }, closers);
    const http = await startHttpTriggers({
      functions: registry.withTrigger("httpTrigger"),
      keys,
      durableWebhooks: engine.webhooks,
      port,
      host: options.host,
      bindingData,
      logger,
    });
    closers.push(() => http.close());
    // Last, once the broker it sends to and receives from is up.
    const store = storefront ? await startHostedStorefront(storefront, logger) : undefined;
    if (store) closers.push(() => store.close());
    return {
      url: http.url,
      keys,
      storeUrl: store?.url ?? null,
      notes: [
        engine.note,
        ...standIns.map((standIn) => standIn.description),
        sql.note,
        `data protection: the key ring from ${dataKeys.source}`,
        ...(storefront ? [`storefront: order book in ${storefront.data}`] : []),
      ],
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Hands the app the orders table in a SQLite file (src/config/azure-settings.ts, HOSTED_ORDERS), before it
 * loads; the returned closer takes it back and closes the file.
 */
function handOrders(file: string, clock: SystemClock): () => Promise<void> {
  const db = openDatabase(file);
  const slot = globalThis as { [HOSTED_ORDERS]?: unknown };
  slot[HOSTED_ORDERS] = new SqliteOrdersRepository(db, clock);
  return async () => {
    delete slot[HOSTED_ORDERS];
    db.close();
  };
}

/** The storefront's settings when it is asked for, after checking nothing holds its port. */
async function plannedStorefront(options: FunctionsHostOptions, settings: Readonly<Record<string, string>>) {
  if (!options.store) return undefined;
  const storefront = hostedStorefrontSettings(settings, {
    ...options.store,
    host: options.host,
    data: options.data,
  });
  await checkStorePort(storefront);
  return storefront;
}

function withoutSettings(settings: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(settings).filter(([name]) => !names.includes(name)));
}

/** The app's own validation, before anything starts; without a settings file, says where the sample is. */
function checkSettings(settings: Readonly<Record<string, string>>, appRoot: string): void {
  try {
    loadAzureSettings(settings);
  } catch (error) {
    if (!(error instanceof SettingsError) || existsSync(join(appRoot, "local.settings.json"))) throw error;
    throw new SettingsError([
      ...error.problems,
      `no local.settings.json in ${appRoot}: copy local.settings.sample.json to it (sas host needs no key or password in it)`,
    ]);
  }
}

/** The Service Bus and timer triggers, each group's close added to `closers`. */
function startBackgroundTriggers(
  registry: FunctionRegistry,
  deps: {
    readonly settings: Readonly<Record<string, string>>;
    readonly resolve: (text: string) => string;
    readonly hostJson: HostJson;
    readonly clock: SystemClock;
    readonly bindingData: BindingData;
    readonly logger: Logger;
  },
  closers: (() => Promise<void>)[],
): void {
  const { resolve, bindingData, logger } = deps;
  const serviceBus = startServiceBusTriggers({
    functions: registry.withTrigger("serviceBusTrigger"),
    clientFor: serviceBusClients(deps.settings, closers),
    resolve,
    maxConcurrentCalls: deps.hostJson.serviceBusMaxConcurrentCalls,
    maxAutoLockRenewalDurationInMs: deps.hostJson.maxAutoLockRenewalDurationMs,
    bindingData,
    logger,
  });
  closers.push(() => serviceBus.close());
  const timers = startTimerTriggers({
    functions: registry.withTrigger("timerTrigger"),
    resolve,
    clock: deps.clock,
    bindingData,
    logger,
  });
  closers.push(() => timers.close());
}

/** Where the host serves HTTP, as a URL's origin: the management links name it. */
function originOf(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** What the stand-ins add to the app's settings (the partner stand-in's access key). */
function standInSettings(standIns: readonly StandIn[]): Record<string, string> {
  return Object.assign({}, ...standIns.map((standIn) => standIn.settings ?? {}));
}

/** The app reads its settings from the environment when it loads, as under the host. */
function setEnvironment(settings: Readonly<Record<string, string>>, removed: readonly string[]): void {
  for (const name of removed) delete process.env[name];
  Object.assign(process.env, settings);
}

/** Imports package.json's `main` as the Node.js worker does, capturing every function it registers. */
async function loadApp(appRoot: string): Promise<FunctionRegistry> {
  const pkg = JSON.parse(readFileSync(join(appRoot, "package.json"), "utf8")) as { main?: string };
  if (!pkg.main) throw new Error("package.json has no main: the host loads the app from it");
  const entry = resolvePath(appRoot, pkg.main);
  let registry: FunctionRegistry;
  try {
    registry = await captureRegistrations(() => import(pathToFileURL(entry).href));
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_MODULE_NOT_FOUND" && String(error).includes(entry)) {
      throw new Error(`${pkg.main} does not exist: build the app first (npm run build)`);
    }
    throw error;
  }
  if (registry.all().length === 0)
    throw new Error(`${pkg.main} registered no functions (already loaded in this process?)`);
  for (const fn of registry.all()) {
    const type = triggerOf(fn)?.type ?? "no";
    if (!RUN_HERE.has(type))
      throw new Error(`function ${fn.name} has a ${type} trigger, which sas host does not run`);
  }
  return registry;
}

/** One Service Bus client per connection a trigger names, closed with the host. */
function serviceBusClients(settings: Readonly<Record<string, string>>, closers: (() => Promise<void>)[]) {
  const clients = new Map<string, ServiceBusClient>();
  return (connection: string): ServiceBusClient => {
    const name = connection || CONNECTION_NAMES.serviceBus;
    let client = clients.get(name);
    if (!client) {
      client = createServiceBusClient({
        connectionString: settings[name],
        fullyQualifiedNamespace: settings[`${name}__fullyQualifiedNamespace`],
      });
      clients.set(name, client);
      const created = client;
      closers.push(() => created.close());
    }
    return client;
  };
}
