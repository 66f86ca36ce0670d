import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { SettingsError } from "../../src/config/settings.js";
import { newAccessKey } from "../http/access-key.js";
import type { HostKeys } from "./http-triggers.js";

/** The app settings the host runs with: `local.settings.json`'s Values, under the environment's own. */
export function hostSettings(
  appRoot: string,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const path = join(appRoot, "local.settings.json");
  let values: Record<string, string> = {};
  if (existsSync(path)) {
    let parsed: { Values?: unknown };
    try {
      parsed = JSON.parse(readFileSync(path, "utf8")) as { Values?: unknown };
    } catch (error) {
      throw new SettingsError([`local.settings.json: not JSON (${(error as Error).message})`]);
    }
    const given = parsed.Values;
    if (given !== undefined && (typeof given !== "object" || given === null || Array.isArray(given))) {
      throw new SettingsError(["local.settings.json: Values must be an object of settings"]);
    }
    values = Object.fromEntries(
      Object.entries(parsed.Values ?? {}).map(([key, value]) => [key, String(value)]),
    );
  }
  const defined = Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return { ...values, ...Object.fromEntries(defined) };
}

/** Replaces each `%NAME%` with that setting, as the host resolves binding properties. */
export function resolverOf(settings: Readonly<Record<string, string>>): (text: string) => string {
  return (text) =>
    text.replace(/%([^%]+)%/g, (_, name: string) => {
      const value = settings[name];
      if (value === undefined)
        throw new SettingsError([`${name}: named by a binding as %${name}% but not set`]);
      return value;
    });
}

/**
 * Which existing instances a start under the same id may replace (`extensions.durableTask.
 * overridableExistingInstanceStates`): only finished ones (the extension's default), or any, running
 * ones included.
 */
export const OVERRIDABLE_STATES = ["NonRunningStates", "AnyState"] as const;
export type OverridableStates = (typeof OVERRIDABLE_STATES)[number];

/** The parts of host.json this host honours. */
export interface HostJson {
  readonly hubName: string;
  readonly maxConcurrentActivityFunctions: number;
  readonly overridableExistingInstanceStates: OverridableStates;
  readonly serviceBusMaxConcurrentCalls: number;
  readonly maxAutoLockRenewalDurationMs: number;
}

export function readHostJson(appRoot: string, resolve: (text: string) => string): HostJson {
  const json = JSON.parse(readFileSync(join(appRoot, "host.json"), "utf8")) as {
    extensions?: {
      durableTask?: {
        hubName?: string;
        maxConcurrentActivityFunctions?: number;
        overridableExistingInstanceStates?: unknown;
      };
      serviceBus?: { maxConcurrentCalls?: number; maxAutoLockRenewalDuration?: string };
    };
  };
  const durable = json.extensions?.durableTask ?? {};
  const serviceBus = json.extensions?.serviceBus ?? {};
  return {
    hubName: resolve(durable.hubName ?? "TestHubName"),
    maxConcurrentActivityFunctions: durable.maxConcurrentActivityFunctions ?? 10,
    overridableExistingInstanceStates: overridableStates(durable.overridableExistingInstanceStates),
    serviceBusMaxConcurrentCalls: serviceBus.maxConcurrentCalls ?? 16,
    maxAutoLockRenewalDurationMs: timeSpanMs(serviceBus.maxAutoLockRenewalDuration ?? "00:05:00"),
  };
}

/** The setting as the host binds an enum: either name, in any case; absent, the extension's default. */
function overridableStates(given: unknown): OverridableStates {
  if (given === undefined) return "NonRunningStates";
  const text = String(given).toLowerCase();
  const named = OVERRIDABLE_STATES.find((name) => name.toLowerCase() === text);
  if (named) return named;
  throw new SettingsError([
    `host.json: extensions.durableTask.overridableExistingInstanceStates must be ${OVERRIDABLE_STATES.join(" or ")}; got ${JSON.stringify(given)}`,
  ]);
}

/** A .NET TimeSpan as host.json writes one, `hh:mm:ss`. */
function timeSpanMs(text: string): number {
  const match = /^(\d+):(\d{2}):(\d{2})$/.exec(text);
  if (!match) throw new SettingsError([`host.json: ${text} is not a duration hh:mm:ss`]);
  const [, hours = "0", minutes = "0", seconds = "0"] = match;
  return ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1_000;
}

/**
 * The host's keys, made on first start and kept in the data folder (as the host keeps its keys in
 * storage): `sas orders --key` takes the function key, the operator commands need the master key,
 * and the Durable Functions extension's webhooks (the management links an HTTP starter returns) take
 * the `durabletask_extension` system key. A file from before that key existed gets one added.
 */
export function hostKeys(data: string): HostKeys {
  const path = join(data, "host-keys.json");
  const newKey = () => newAccessKey(30);
  if (existsSync(path)) {
    const stored = readKeys(path);
    if (stored.durableTaskKey) return { ...stored, durableTaskKey: stored.durableTaskKey };
    return writeKeys(path, { ...stored, durableTaskKey: newKey() });
  }
  return writeKeys(path, { functionKey: newKey(), masterKey: newKey(), durableTaskKey: newKey() });
}

function writeKeys(path: string, keys: HostKeys): HostKeys {
  writeFileSync(path, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  return keys;
}

const hostKeysSchema = z.object({
  functionKey: z.string().min(1),
  masterKey: z.string().min(1),
  durableTaskKey: z.string().min(1).optional(),
});

function readKeys(path: string): z.infer<typeof hostKeysSchema> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    parsed = undefined;
  }
  const keys = hostKeysSchema.safeParse(parsed);
  if (!keys.success) {
    throw new SettingsError([
      `${path}: not the host's keys ({ "functionKey", "masterKey" }); delete it to make new ones`,
    ]);
  }
  return keys.data;
}
