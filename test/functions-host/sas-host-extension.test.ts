/**
 * `sas host` on Microsoft's Durable Task extension (the default where .NET is installed): the app's
 * orchestrations and activities run through the real extension, its Azure Storage backend on Azurite,
 * in the extension host's .NET process (laptop/extension-host/). Needs the .NET SDK 8 or later: without
 * it these tests are skipped, saying so, except under CI (CI=true), where they fail. The extension host
 * is built once into .build/extension-host/ and shared (.ci/run builds it before the tests).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findDotnetSdk } from "../../laptop/extension-host/dotnet-sdk.js";
import { buildExtensionHost } from "../../laptop/extension-host/extension-build.js";
import { freePorts as distinctFreePorts } from "../../laptop/http/free-ports.js";
import {
  type BuiltApp,
  buildApp,
  type HostPorts,
  orderIds,
  type RunningHost,
  sendOrders,
  startHost,
  writeLocalSettings,
} from "./host-process.js";
import { tableRows } from "./task-hub-tables.js";

const sdk = findDotnetSdk();
if (!sdk.found) {
  const reason = `no .NET SDK 8 or later (${sdk.why})`;
  if (process.env.CI === "true")
    throw new Error(`${reason}; CI runs sas host on the extension and needs one`);
  console.warn(`test/functions-host: sas host on the Durable Task extension is skipped: ${reason}`);
}
const describeWithDotnet = sdk.found ? describe : describe.skip;

const AZURITE_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const PARTNER_KEY = "partner-key-from-local-settings";
const HUB = "ExtensionTestHub";

let app: BuiltApp | undefined;
const hosts: RunningHost[] = [];
const folders: string[] = [];

beforeAll(async () => {
  if (!sdk.found) return;
  await buildExtensionHost();
  app = buildApp();
}, 600_000);
afterEach(async () => {
  // Last started first: a second host uses the first one's stand-ins.
  for (const host of hosts.splice(0).reverse()) await host.stop();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true, maxRetries: 10 });
}, 120_000);
afterAll(() => app?.remove());

/** Azurite's table endpoint on these ports. */
function tables(ports: { readonly table: number }): string {
  return `http://127.0.0.1:${ports.table}/devstoreaccount1`;
}

/** The host's ports, and Azurite's queue and table ports beside its blob port. */
async function storagePorts(): Promise<HostPorts & { readonly queue: number; readonly table: number }> {
  return distinctFreePorts(["http", "serviceBus", "cosmos", "blob", "queue", "table", "partner", "store"]);
}

async function orderState(host: RunningHost, id: string): Promise<string | undefined> {
  const response = await fetch(`${host.url}/api/orders/${id}`, {
    headers: { "x-functions-key": host.functionKey },
  });
  if (response.status !== 200) return undefined;
  return String(((await response.json()) as { processState?: unknown }).processState);
}

async function untilProcessed(host: RunningHost, ids: readonly string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  const states = new Map<string, string | undefined>();
  while (Date.now() < deadline) {
    for (const id of ids) if (states.get(id) !== "Processed") states.set(id, await orderState(host, id));
    if (ids.every((id) => states.get(id) === "Processed")) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return ids.map((id) => states.get(id));
}

type StoragePorts = Awaited<ReturnType<typeof storagePorts>>;

/** The sample settings on the given ports, Azurite's three services named, and the partner's key known. */
function writeExtensionSettings(
  built: BuiltApp,
  ports: StoragePorts,
  overrides: Record<string, string> = {},
) {
  writeLocalSettings(built, ports, {
    AzureWebJobsStorage:
      `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${AZURITE_KEY};` +
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

function dataFolder(): string {
  const data = mkdtempSync(join(tmpdir(), "sas-host-extension-"));
  folders.push(data);
  return data;
}

/** Each order's four effects at the partner, as its ledger counts them: applied once, never undone. */
async function expectEachEffectOnce(ports: StoragePorts, ids: readonly string[]) {
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
function writeCrashSettings(built: BuiltApp, ports: StoragePorts) {
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
function eventLines(host: RunningHost, event: string): Record<string, unknown>[] {
  return host
    .stderr()
    .split("\n")
    .filter((line) => line.startsWith("{") && line.includes(`"event":"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The extension hosts' pids, in the order sas host started them (its `extension.started` lines). */
function extensionPids(host: RunningHost): number[] {
  return eventLines(host, "extension.started").map((line) => Number(line.pid));
}

/** Whether a process runs (a zombie, ended but not yet reaped, does not). */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Waits until at least `least` of the orders are Processed; how many were when it stopped waiting. */
async function untilSomeProcessed(
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

describeWithDotnet("sas host on the Durable Task extension", () => {
  it("runs the app's orchestrations there: orders reach Processed, each effect once, histories in the task hub's tables", async () => {
    if (!app) throw new Error("no app was built");
    const ports = await storagePorts();
    const tables = `http://127.0.0.1:${ports.table}/devstoreaccount1`;
    writeExtensionSettings(app, ports);
    const data = dataFolder();
    const host = await startHost(app, ports, data, {
      durable: "extension",
      store: false,
      timeoutMs: 180_000,
    });
    hosts.push(host);
    const banner = host.stdout().split("\n");
    expect(banner[0]).toMatch(
      /^sas host: durable engine: Microsoft's Durable Task extension, on \.NET SDK \d+/,
    );
    // host.json's hub name resolved from the setting, its concurrency applied, by the extension itself.
    expect(banner).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^durable: Microsoft\\.Azure\\.WebJobs\\.Extensions\\.DurableTask 3\\.19\\.0 .*task hub ${HUB} on the Azure Storage backend .*10 orchestrator and 10 activity functions at once`,
        ),
      ),
    );

    expect(sendOrders(app, 8, 31).sent).toBe(8);
    const ids = orderIds(31, 8);
    expect(await untilProcessed(host, ids, 150_000)).toEqual(ids.map(() => "Processed"));

    await expectEachEffectOnce(ports, ids);

    // The extension's Azure Storage backend wrote them: each attempt's instance Completed, its history in rows.
    // (An order is Processed by its last activity; its orchestration completes in the episode after.)
    const statuses = async () => {
      const instances = await tableRows(tables, `${HUB}Instances`);
      return ids.map((id) => instances.find((row) => row.PartitionKey === `${id}:1`)?.RuntimeStatus);
    };
    await expect.poll(statuses, { timeout: 30_000, interval: 500 }).toEqual(ids.map(() => "Completed"));
    const history = await tableRows(tables, `${HUB}History`, `PartitionKey eq '${ids[0]}:1'`);
    const events = history.map((row) => row.EventType);
    expect(events).toEqual(expect.arrayContaining(["ExecutionStarted", "TaskScheduled", "TaskCompleted"]));
    expect(events).toContain("ExecutionCompleted");

    expect(await host.stop()).toBe(0);
    // Stopped with sas host: the extension's endpoint is closed (its process has ended).
    const rpc = /its API on (\S+)/.exec(host.stdout())?.[1] ?? "";
    await expect(fetch(rpc)).rejects.toThrow();
  }, 420_000);

  it("F23-4: kill -9 of the .NET extension host alone mid-run: sas host restarts it, every order Processed, each effect once; killed three times in a minute, sas host gives up", async () => {
    if (!app) throw new Error("no app was built");
    const ports = await storagePorts();
    writeCrashSettings(app, ports);
    const host = await startHost(app, ports, dataFolder(), {
      durable: "extension",
      store: false,
      timeoutMs: 180_000,
    });
    hosts.push(host);
    const [first] = extensionPids(host);
    if (!first) throw new Error(`sas host named no extension host it started\n${host.stderr()}`);
    const ids = orderIds(34, 40);
    sendOrders(app, 40, 34);
    const processed = await untilSomeProcessed(host, ids, 5, 120_000);
    process.kill(first, "SIGKILL");
    expect(processed).toBeGreaterThanOrEqual(5);
    expect(processed).toBeLessThan(40);

    // The sas host lives on, says what ended and how, and starts another extension host.
    await expect.poll(() => extensionPids(host).length, { timeout: 60_000, interval: 500 }).toBe(2);
    expect(host.child.exitCode).toBeNull();
    expect(eventLines(host, "extension.exited")).toEqual([
      expect.objectContaining({ level: "error", pid: first, code: null, signal: "SIGKILL" }),
    ]);
    expect(eventLines(host, "extension.restarting")).toEqual([
      expect.objectContaining({ pid: first, how: "signal SIGKILL", inMs: 1_000, exitsInWindow: 1 }),
    ]);
    expect(isRunning(first)).toBe(false);

    expect(await untilProcessed(host, ids, 240_000)).toEqual(ids.map(() => "Processed"));
    await expectEachEffectOnce(ports, ids);

    // Killed again as soon as each new one runs, it ends a third time within a minute: sas host gives up.
    for (let kills = 1; kills < 4 && host.child.exitCode === null; kills++) {
      const pids = extensionPids(host);
      process.kill(pids[pids.length - 1] ?? 0, "SIGKILL");
      await expect
        .poll(() => host.child.exitCode !== null || extensionPids(host).length > pids.length, {
          timeout: 60_000,
          interval: 200,
        })
        .toBe(true);
    }
    expect(await host.stop()).toBe(1);
    expect(host.stderr()).toMatch(
      /^sas host: the extension host ended 3 times within 60 s \(the last, pid \d+, by signal SIGKILL\); its durable functions stopped$/m,
    );
    // None of the hosts it started outlives sas host.
    expect(extensionPids(host).filter(isRunning)).toEqual([]);
  }, 480_000);

  it("F23-5: kill -9 of the sas host's Node process mid-run: its extension host ends with it, the restart finishes every order, each effect once", async () => {
    if (!app) throw new Error("no app was built");
    const ports = await storagePorts();
    writeCrashSettings(app, ports);
    const data = dataFolder();
    const first = await startHost(app, ports, data, {
      durable: "extension",
      store: false,
      timeoutMs: 180_000,
    });
    hosts.push(first);
    const [dotnet] = extensionPids(first);
    if (!dotnet) throw new Error(`sas host named no extension host it started\n${first.stderr()}`);
    const ids = orderIds(32, 40);
    sendOrders(app, 40, 32);
    const processed = await untilSomeProcessed(first, ids, 5, 120_000);
    // Killed with orders done, in flight and still on the queue; the extension host and Azurite end with it.
    await first.stop("SIGKILL");
    expect(processed).toBeGreaterThanOrEqual(5);
    expect(processed).toBeLessThan(40);
    // No orphan goes on holding the task hub's partition leases and running the orders' work.
    await expect.poll(() => isRunning(dotnet), { timeout: 10_000, interval: 200 }).toBe(false);

    const second = await startHost(app, ports, data, {
      durable: "extension",
      store: false,
      timeoutMs: 180_000,
    });
    hosts.push(second);
    expect(await untilProcessed(second, ids, 240_000)).toEqual(ids.map(() => "Processed"));
    await expectEachEffectOnce(ports, ids);
  }, 480_000);
});

describeWithDotnet("two sas hosts on one task hub", () => {
  it("share the orchestrations' work, as scaled-out Function App instances do: every order Processed, effects once", async () => {
    if (!app) throw new Error("no app was built");
    const ports = await storagePorts();
    const second = await distinctFreePorts(["http"]);
    const shared = dataFolder();
    // What two instances share in Azure: the settings, the orders table, the key ring, the stand-ins.
    writeExtensionSettings(app, ports, {
      OrdersSql__sqliteFile: join(shared, "orders.db"),
      DATA_PROTECTION_KEYS: `k1:${Buffer.alloc(32, 7).toString("base64")}`,
    });
    const first = await startHost(app, ports, dataFolder(), {
      durable: "extension",
      store: false,
      timeoutMs: 180_000,
    });
    hosts.push(first);
    const other = await startHost(app, { ...ports, http: second.http }, dataFolder(), {
      durable: "extension",
      store: false,
      timeoutMs: 180_000,
    });
    hosts.push(other);
    // The second found every service answering where the settings point, and uses the first's.
    expect(other.stdout()).toMatch(/Service Bus: using the one answering/);
    expect(other.stdout()).toMatch(/Storage: using the one answering/);

    const ids = orderIds(33, 40);
    sendOrders(app, 40, 33);
    // 19 s alone; minutes on a loaded 2-core machine, where partition leases move while the orders run.
    expect(await untilProcessed(first, ids, 400_000)).toEqual(ids.map(() => "Processed"));
    await expectEachEffectOnce(ports, ids);
    // Both extension hosts ran the app's activities, taken from the task hub's one work-item queue.
    const ran = (host: RunningHost) => host.stderr().split("(Activity)' completed").length - 1;
    expect(ran(first)).toBeGreaterThan(0);
    expect(ran(other)).toBeGreaterThan(0);
    // And the orchestrations' control queues (partitions) are shared between the two workers, each named
    // after its host's port, as the backend balances them.
    const owners = async () =>
      new Set((await tableRows(tables(ports), `${HUB}Partitions`)).map((row) => String(row.CurrentOwner)));
    await expect
      .poll(owners, { timeout: 120_000, interval: 2_000 })
      .toEqual(new Set([`sas-host:${hostname()}:${ports.http}`, `sas-host:${hostname()}:${second.http}`]));
  }, 720_000);
});

describe("the app and the real extension's status API", () => {
  it("never asks the SDK for an orchestration's history, which durable-functions 3.5.0 reads empty from it", () => {
    // The extension answers `historyEvents`; the SDK's DurableOrchestrationStatus reads `history`.
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? sources(join(dir, entry.name)) : [join(dir, entry.name)],
      );
    const asking = sources(join(import.meta.dirname, "../../src")).filter(
      (file) => file.endsWith(".ts") && /showHistory/.test(readFileSync(file, "utf8")),
    );
    expect(asking).toEqual([]);
  });
});
