/**
 * What the tests of `sas host` on Microsoft's Durable Task extension share: the .NET SDK's check (without
 * it they are skipped, saying so, except under CI, where they fail), the extension host built once into
 * .build/extension-host/ (.ci/run builds it before the tests), the app built once per file, Azurite's
 * ports and settings, and the reads of the orders, the partner's ledger and the host's log lines.
 */

import { readFileSync } from "node:fs";
import { describe, expect } from "vitest";
import { findDotnetSdk } from "../../laptop/extension-host/dotnet-sdk.js";
import { buildExtensionHost } from "../../laptop/extension-host/extension-build.js";
import { freePorts as distinctFreePorts } from "../../laptop/http/free-ports.js";
import { AZURITE_ACCOUNT_KEY } from "../../laptop/stand-ins/azurite.js";
import {
  type BuiltApp,
  type HostFixture,
  type HostPorts,
  type RunningHost,
  useBuiltApp,
  writeLocalSettings,
} from "./host-process.js";

const sdk = findDotnetSdk();
if (!sdk.found) {
  const reason = `no .NET SDK 8 or later (${sdk.why})`;
  if (process.env.CI === "true")
    throw new Error(`${reason}; CI runs sas host on the extension and needs one`);
  console.warn(`test/functions-host: sas host on the Durable Task extension is skipped: ${reason}`);
}
export const describeWithDotnet = sdk.found ? describe : describe.skip;

export const PARTNER_KEY = "partner-key-from-local-settings";
export const HUB = "ExtensionTestHub";

/**
 * Called at the top of a test file: builds the extension host (cached) and the app once for the file,
 * and stops the hosts and removes the folders each test leaves.
 */
export function useExtensionApp(): HostFixture {
  return useBuiltApp(async () => {
    if (sdk.found) await buildExtensionHost();
  });
}

/** Azurite's table endpoint on these ports. */
export function tables(ports: { readonly table: number }): string {
  return `http://127.0.0.1:${ports.table}/devstoreaccount1`;
}

/** The host's ports, and Azurite's queue and table ports beside its blob port. */
export async function storagePorts(): Promise<
  HostPorts & { readonly queue: number; readonly table: number }
> {
  return distinctFreePorts(["http", "serviceBus", "cosmos", "blob", "queue", "table", "partner", "store"]);
}

export async function orderState(host: RunningHost, id: string): Promise<string | undefined> {
  const response = await fetch(`${host.url}/api/orders/${id}`, {
    headers: { "x-functions-key": host.functionKey },
  });
  if (response.status !== 200) return undefined;
  return String(((await response.json()) as { processState?: unknown }).processState);
}

export async function untilProcessed(host: RunningHost, ids: readonly string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  const states = new Map<string, string | undefined>();
  while (Date.now() < deadline) {
    for (const id of ids) if (states.get(id) !== "Processed") states.set(id, await orderState(host, id));
    if (ids.every((id) => states.get(id) === "Processed")) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return ids.map((id) => states.get(id));
}

export type StoragePorts = Awaited<ReturnType<typeof storagePorts>>;

/** The sample settings on the given ports, Azurite's three services named, and the partner's key known. */
export function writeExtensionSettings(
  built: BuiltApp,
  ports: StoragePorts,
  overrides: Record<string, string> = {},
) {
  writeLocalSettings(built, ports, {
    AzureWebJobsStorage:
      `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${AZURITE_ACCOUNT_KEY};` +
      `BlobEndpoint=http://127.0.0.1:${ports.blob}/devstoreaccount1;` +
      `QueueEndpoint=http://127.0.0.1:${ports.queue}/devstoreaccount1;` +
      `TableEndpoint=http://127.0.0.1:${ports.table}/devstoreaccount1;`,
    TASKHUB_NAME: HUB,
    PARTNER_ACCESS_KEY: PARTNER_KEY,
    // An app setting overrides host.json as in Azure: the backend polls an idle queue at most each second.
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__maxQueuePollingInterval: "00:00:01",
    ...overrides,
  });
}

/** Each order's four effects at the partner, as its ledger counts them: applied once, never undone. */
export async function expectEachEffectOnce(ports: StoragePorts, ids: readonly string[]) {
  const ledger = (await (
    await fetch(`http://127.0.0.1:${ports.partner}/ledger`, { headers: { "x-partner-key": PARTNER_KEY } })
  ).json()) as { byOrder: Record<string, { effects: Record<string, { applied: number; undone: number }> }> };
  for (const id of ids) {
    expect(ledger.byOrder[id]?.effects, id).toEqual({
      reserveInventory: { applied: 1, undone: 0 },
      chargePayment: { applied: 1, undone: 0 },
      arrangeShipment: { applied: 1, undone: 0 },
      notifyCustomer: { applied: 1, undone: 0 },
    });
  }
}

/**
 * Settings for the crash tests. Orders claimed but not started when a host died wait out their attempt
 * before the Supervisor resets them. The backend hands a dead worker's messages out again once their
 * visibility timeout has passed (5 minutes by default, both queues): 20 s and a minute (the extension's
 * least) here, set as app settings over host.json. An attempt whose orchestration Azurite lost the last
 * messages of (it stays Running, nothing left to run it) is given up on after two deadline extensions.
 */
export function writeCrashSettings(built: BuiltApp, ports: StoragePorts) {
  const storageProvider = "AzureFunctionsJobHost__extensions__durableTask__storageProvider";
  writeExtensionSettings(built, ports, {
    ATTEMPT_TIMEOUT_MS: "30000",
    STEP_TIMEOUT_MS: "5000",
    MAX_HOST_INTERRUPTIONS: "2",
    [`${storageProvider}__workItemQueueVisibilityTimeout`]: "00:00:20",
    [`${storageProvider}__controlQueueVisibilityTimeout`]: "00:01:00",
  });
}

/** The host's log lines of one event (whole lines only: the last may still be being written). */
export function eventLines(host: RunningHost, event: string): Record<string, unknown>[] {
  return host
    .stderr()
    .split("\n")
    .filter((line) => line.startsWith("{") && line.includes(`"event":"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The extension hosts' pids, in the order sas host started them (its `extension.started` lines). */
export function extensionPids(host: RunningHost): number[] {
  return eventLines(host, "extension.started").map((line) => Number(line.pid));
}

/** Whether a process runs (a zombie, ended but not yet reaped, does not). */
export function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Waits until at least `least` of the orders are Processed; how many were when it stopped waiting. */
export async function untilSomeProcessed(
  host: RunningHost,
  ids: readonly string[],
  least: number,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  let processed = 0;
  while (processed < least && Date.now() < deadline) {
    processed = (await Promise.all(ids.map((id) => orderState(host, id)))).filter(
      (state) => state === "Processed",
    ).length;
  }
  return processed;
}
