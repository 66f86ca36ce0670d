import { join } from "node:path";
import { isAddressInUse, PortInUseError } from "../../src/adapters/web/listen-or-refuse.js";
import { CONNECTION_NAMES, QUEUE_NAMES } from "../../src/config/names.js";
import { SettingsError } from "../../src/config/settings.js";
import type { Logger } from "../../src/ports/logger.js";
import { startStandaloneStorefront } from "../../storefront/main.js";
import {
  loadStorefrontSettings,
  STOREFRONT_SETTINGS,
  type StorefrontSettings,
  StorefrontSettingsError,
} from "../../storefront/settings.js";
import type { Storefront } from "../../storefront/storefront.js";
import { answers } from "../http/port-probe.js";

/** Where `sas host` serves the storefront. */
export interface StorefrontPlace {
  readonly port: number;
  readonly host: string;
  /** The host's data folder; the order book goes in its `storefront` folder. */
  readonly data: string;
}

/**
 * The storefront's port is held by something else: `sas host` stops before (or after) starting
 * anything, reported as any taken port is (a PortInUseError, exit status 2).
 */
export class StorePortTakenError extends PortInUseError {
  constructor(port: number, host: string) {
    super({
      port,
      host,
      subject: "the storefront's port",
      remedy: "give --store-port <n> (or --no-store)",
    });
  }
}

/**
 * The storefront's settings as App Service would pass them, made from the app's: the same Service Bus
 * connection (so, locally, the stand-in broker), the orders queue the app reads, the storefront's own
 * status queue. Read by the storefront's own loader, so they are checked as in Azure; a problem is a
 * SettingsError, reported before anything starts.
 */
export function hostedStorefrontSettings(
  appSettings: Readonly<Record<string, string>>,
  place: StorefrontPlace,
): StorefrontSettings {
  const connection = CONNECTION_NAMES.serviceBus;
  const env = {
    [STOREFRONT_SETTINGS.connectionString]: appSettings[connection],
    [STOREFRONT_SETTINGS.namespace]: appSettings[`${connection}__fullyQualifiedNamespace`],
    [STOREFRONT_SETTINGS.ordersQueue]: QUEUE_NAMES.orders,
    [STOREFRONT_SETTINGS.statusQueue]: QUEUE_NAMES.storefrontStatus,
    [STOREFRONT_SETTINGS.data]: join(place.data, "storefront"),
    [STOREFRONT_SETTINGS.port]: String(place.port),
    [STOREFRONT_SETTINGS.host]: place.host,
  };
  try {
    return loadStorefrontSettings(env);
  } catch (error) {
    if (error instanceof StorefrontSettingsError)
      throw new SettingsError(error.problems.map((problem) => `storefront: ${problem}`));
    throw error;
  }
}

/** Refuses a port something already answers on, so a taken port costs no start of the rest. */
export async function checkStorePort(settings: StorefrontSettings): Promise<void> {
  if (settings.port !== 0 && (await answers(settings.host, settings.port)))
    throw new StorePortTakenError(settings.port, settings.host);
}

/** The storefront as `storefront/main.ts` starts it in Azure, its log lines among the host's. */
export async function startHostedStorefront(
  settings: StorefrontSettings,
  logger: Logger,
): Promise<Storefront> {
  try {
    return await startStandaloneStorefront(settings, { logger });
  } catch (error) {
    if (isAddressInUse(error)) throw new StorePortTakenError(settings.port, settings.host);
    throw error;
  }
}
