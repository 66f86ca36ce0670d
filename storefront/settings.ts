/**
 * The stand-alone storefront's settings (storefront/main.ts), read from the environment as App Service
 * passes its app settings. Every setting is checked before anything is opened; all the invalid ones are
 * named in one error.
 */
import { PIPELINE_QUEUES } from "../src/domain/order.js";
import { DEFAULT_LIMITS, limitProblems, resolveLimits, type StorefrontLimits } from "./limits.js";

export const STOREFRONT_SETTINGS = {
  connectionString: "ServiceBusConnection",
  namespace: "ServiceBusConnection__fullyQualifiedNamespace",
  ordersQueue: "ORDERS_QUEUE",
  statusQueue: "STOREFRONT_STATUS_QUEUE",
  data: "STOREFRONT_DATA",
  port: "PORT",
  host: "STOREFRONT_HOST",
  ordersPerMinute: "STOREFRONT_MAX_ORDERS_PER_MINUTE",
  visitorOrdersPerMinute: "STOREFRONT_MAX_VISITOR_ORDERS_PER_MINUTE",
  streams: "STOREFRONT_MAX_STREAMS",
  visitorStreams: "STOREFRONT_MAX_VISITOR_STREAMS",
} as const;

export type ServiceBusConnection =
  | { readonly kind: "connectionString"; readonly connectionString: string }
  | { readonly kind: "identity"; readonly fullyQualifiedNamespace: string };

export interface StorefrontSettings {
  readonly serviceBus: ServiceBusConnection;
  readonly ordersQueue: string;
  readonly statusQueue: string;
  /** Folder of the order book (`orders.sqlite` in it). */
  readonly data: string;
  readonly port: number;
  readonly host: string;
  readonly limits: StorefrontLimits;
}

export class StorefrontSettingsError extends Error {
  override readonly name = "StorefrontSettingsError";
  constructor(readonly problems: readonly string[]) {
    super(`invalid storefront settings: ${problems.join("; ")}`);
  }
}

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9\-_./~]{0,259}$/;
const NAMESPACE = /^[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9](:\d+)?$/;

type Env = Readonly<Record<string, string | undefined>>;

export function loadStorefrontSettings(env: Env): StorefrontSettings {
  const problems: string[] = [];
  const read = (name: string, fallback: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? fallback : value;
  };
  const serviceBus = connectionFrom(env, problems);
  const ordersQueue = read(STOREFRONT_SETTINGS.ordersQueue, "orders");
  const statusQueue = read(STOREFRONT_SETTINGS.statusQueue, "storefront-status");
  for (const [name, value] of [
    [STOREFRONT_SETTINGS.ordersQueue, ordersQueue],
    [STOREFRONT_SETTINGS.statusQueue, statusQueue],
  ] as const) {
    if (!QUEUE_NAME.test(value))
      problems.push(
        `${name} must be a queue name (letters, digits and - _ . / ~); got ${JSON.stringify(value)}`,
      );
  }
  if (PIPELINE_QUEUES.includes(statusQueue.toLowerCase())) {
    problems.push(
      `${STOREFRONT_SETTINGS.statusQueue} must not name one of the pipeline's own queues; got ${statusQueue}`,
    );
  }
  const rawPort = read(STOREFRONT_SETTINGS.port, "7080");
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port > 65_535) {
    problems.push(
      `${STOREFRONT_SETTINGS.port} must be a port number from 0 to 65535; got ${JSON.stringify(rawPort)}`,
    );
  }
  const limits = limitsFrom(env, problems);
  if (problems.length > 0 || !serviceBus) throw new StorefrontSettingsError(problems);
  return {
    serviceBus,
    ordersQueue,
    statusQueue,
    data: read(STOREFRONT_SETTINGS.data, ".data/storefront"),
    port,
    host: read(STOREFRONT_SETTINGS.host, "0.0.0.0"),
    limits,
  };
}

/** The limits, each from its setting or as `resolveLimits` defaults it; each that is wrong is named. */
function limitsFrom(env: Env, problems: string[]): StorefrontLimits {
  const given: { -readonly [K in keyof StorefrontLimits]?: number } = {};
  for (const limit of Object.keys(DEFAULT_LIMITS) as (keyof StorefrontLimits)[]) {
    const raw = env[STOREFRONT_SETTINGS[limit]]?.trim();
    if (raw === undefined || raw === "") continue;
    if (/^\d+$/.test(raw)) given[limit] = Number(raw);
    else problems.push(`${STOREFRONT_SETTINGS[limit]} must be a whole number; got ${JSON.stringify(raw)}`);
  }
  const limits = resolveLimits(given);
  problems.push(...limitProblems(limits, (limit) => STOREFRONT_SETTINGS[limit]));
  return limits;
}

/** A connection string wins when both are given, as the Functions host decides. */
function connectionFrom(env: Env, problems: string[]): ServiceBusConnection | undefined {
  const connectionString = env[STOREFRONT_SETTINGS.connectionString]?.trim();
  if (connectionString) {
    if (!/(^|;)\s*Endpoint=/i.test(connectionString)) {
      problems.push(
        `${STOREFRONT_SETTINGS.connectionString} must be a Service Bus connection string (Endpoint=sb://...;...)`,
      );
      return undefined;
    }
    return { kind: "connectionString", connectionString };
  }
  const namespace = env[STOREFRONT_SETTINGS.namespace]?.trim();
  if (namespace) {
    if (!NAMESPACE.test(namespace)) {
      problems.push(
        `${STOREFRONT_SETTINGS.namespace} must be a host name such as <namespace>.servicebus.windows.net; got ${JSON.stringify(namespace)}`,
      );
      return undefined;
    }
    return { kind: "identity", fullyQualifiedNamespace: namespace };
  }
  problems.push(
    `Service Bus connection: set ${STOREFRONT_SETTINGS.connectionString} (a connection string) or ${STOREFRONT_SETTINGS.namespace} (managed identity)`,
  );
  return undefined;
}
