import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { ServiceBusClient, type ServiceBusClientOptions } from "@azure/service-bus";

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
  /** For the identity-based connection; `DefaultAzureCredential` (managed identity in Azure) by default. */
  readonly credential?: TokenCredential;
}

/** Builds a client for the settings given; nothing connects until the first send or receive. */
export function createServiceBusClient(
  settings: ServiceBusConnectionSettings,
  options: CreateServiceBusClientOptions = {},
): ServiceBusClient {
  const connectionString = settings.connectionString?.trim();
  if (connectionString) return new ServiceBusClient(connectionString, options.clientOptions);
  const namespace = settings.fullyQualifiedNamespace?.trim();
  if (namespace) {
    const credential = options.credential ?? new DefaultAzureCredential();
    return new ServiceBusClient(namespace, credential, options.clientOptions);
  }
  throw new Error("Service Bus connection: give a connection string or a fully qualified namespace");
}
