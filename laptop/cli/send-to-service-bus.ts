import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { createServiceBusClient } from "../../src/adapters/servicebus/service-bus-client.js";
import { ServiceBusMessageQueue } from "../../src/adapters/servicebus/service-bus-queue.js";
import { CONNECTION_NAMES } from "../../src/config/names.js";
import { SettingsError } from "../../src/config/settings.js";
import { sendOrders } from "./send-orders.js";

export interface SendToServiceBusOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where `local.settings.json` is looked for, as `func start` does. */
  readonly cwd: string;
  readonly queueName: string;
  readonly count: number;
  readonly seed: number;
  readonly replyTo: string;
}

/**
 * `sas send`: generated orders onto the real Service Bus queue. The connection comes from the
 * environment, else from `local.settings.json`: a connection string (the emulator), or a namespace
 * reached with the signed-in identity (Azure).
 */
export async function sendToServiceBus(options: SendToServiceBusOptions) {
  const settings = { ...localSettings(options.cwd), ...definedOnly(options.env) };
  const name = CONNECTION_NAMES.serviceBus;
  const connectionString = settings[name];
  const fullyQualifiedNamespace = settings[`${name}__fullyQualifiedNamespace`];
  if (!connectionString && !fullyQualifiedNamespace) {
    throw new SettingsError([`Service Bus connection: set ${name} or ${name}__fullyQualifiedNamespace`]);
  }
  const client = createServiceBusClient({ connectionString, fullyQualifiedNamespace });
  const queue = new ServiceBusMessageQueue(client, options.queueName, {}, { clock: new SystemClock() });
  try {
    const prefix = `send-${options.seed.toString(36)}`;
    const { sent, orderIds } = await sendOrders({ ...options, queue, prefix });
    return {
      queue: options.queueName,
      sent,
      firstOrderId: orderIds[0] ?? null,
      lastOrderId: orderIds.at(-1) ?? null,
    };
  } finally {
    await queue.close();
    await client.close();
  }
}

function localSettings(cwd: string): Record<string, string> {
  const path = join(cwd, "local.settings.json");
  if (!existsSync(path)) return {};
  const parsed = JSON.parse(readFileSync(path, "utf8")) as { Values?: Record<string, string> };
  return parsed.Values ?? {};
}

function definedOnly(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ""),
  );
}
