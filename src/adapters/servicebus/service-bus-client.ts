import type { TokenCredential } from "@azure/identity";
import { RetryMode, ServiceBusClient, type ServiceBusClientOptions } from "@azure/service-bus";
import { azureCredential } from "../azure-credential.js";

/**
 * How to reach a namespace, in the Functions app-setting convention: `ServiceBusConnection` holds a
 * connection string (a SAS key, or the emulator's with `UseDevelopmentEmulator=true`), and
 * `ServiceBusConnection__fullyQualifiedNamespace` (`<namespace>.servicebus.windows.net`) selects an
 * identity-based connection. A connection string wins when both are present.
 */
export interface ServiceBusConnectionSettings {
  readonly connectionString?: string | undefined;
  readonly fullyQualifiedNamespace?: string | undefined;
}

export interface CreateServiceBusClientOptions {
  readonly clientOptions?: ServiceBusClientOptions;
  /** For the identity-based connection; the app's managed identity (azure-credential.ts) by default. */
  readonly credential?: TokenCredential;
}

/**
 * How the client retries a send, a receive or a settlement (F24-2), short of its defaults (a 60 s timeout
 * per try, 3 retries 30 s apart): the messages it sends serve a step's deadline (STEP_TIMEOUT_MS, 30 s by
 * default: an Agent's request and its reply in the queue form). Each try is cut at 5 s, connecting
 * included; 2 retries after 0.5 s then 1.5 s (each ±20%, at most 2 s). Worst case: 3 × 5 s + 2.4 s,
 * under 18 s.
 */
export const SERVICE_BUS_RETRIES = {
  mode: RetryMode.Exponential,
  maxRetries: 2,
  retryDelayInMs: 500,
  maxRetryDelayInMs: 2_000,
  timeoutInMs: 5_000,
} as const;

/**
 * Builds a client for the settings given, with `SERVICE_BUS_RETRIES` unless `clientOptions` names its
 * own; nothing connects until the first send or receive.
 */
export function createServiceBusClient(
  settings: ServiceBusConnectionSettings,
  options: CreateServiceBusClientOptions = {},
): ServiceBusClient {
  const clientOptions: ServiceBusClientOptions = {
    ...options.clientOptions,
    retryOptions: { ...SERVICE_BUS_RETRIES, ...options.clientOptions?.retryOptions },
  };
  const connectionString = settings.connectionString?.trim();
  if (connectionString) return new ServiceBusClient(connectionString, clientOptions);
  const namespace = settings.fullyQualifiedNamespace?.trim();
  if (namespace) {
    const credential = options.credential ?? azureCredential();
    return new ServiceBusClient(namespace, credential, clientOptions);
  }
  throw new Error("Service Bus connection: give a connection string or a fully qualified namespace");
}
