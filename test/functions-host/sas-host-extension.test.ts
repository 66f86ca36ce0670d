/**
 * `sas host` on Microsoft's Durable Task extension (the default where .NET is installed): the app's
 * orchestrations and activities run through the real extension, its Azure Storage backend on Azurite,
 * in the extension host's .NET process (laptop/extension-host/); and the .NET host killed alone. The
 * Node process killed: sas-host-extension-kill.test.ts; two hosts on one task hub:
 * sas-host-scale-out.test.ts (files of their own, so that the minutes each waits overlap).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tableRows } from "../../laptop/stand-ins/azurite-tables.js";
import {
  describeWithDotnet,
  eventLines,
  expectEachEffectOnce,
  extensionPids,
  HUB,
  isRunning,
  storagePorts,
  untilProcessed,
  untilSomeProcessed,
  useExtensionApp,
  writeCrashSettings,
  writeExtensionSettings,
} from "./extension-hosts.js";
import { orderIds, sendOrders, startHost } from "./host-process.js";

const { built: builtApp, hosts, dataFolder } = useExtensionApp();

describeWithDotnet("sas host on the Durable Task extension", () => {
  it("runs the app's orchestrations there: orders reach Processed, each effect once, histories in the task hub's tables", async () => {
    const app = builtApp();
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
    const history = await tableRows(tables, `${HUB}History`, { filter: `PartitionKey eq '${ids[0]}:1'` });
    const events = history.map((row) => row.EventType);
    expect(events).toEqual(expect.arrayContaining(["ExecutionStarted", "TaskScheduled", "TaskCompleted"]));
    expect(events).toContain("ExecutionCompleted");

    expect(await host.stop()).toBe(0);
    // Stopped with sas host: the extension's endpoint is closed (its process has ended).
    const rpc = /its API on (\S+)/.exec(host.stdout())?.[1] ?? "";
    await expect(fetch(rpc)).rejects.toThrow();
  }, 420_000);
});

describeWithDotnet("sas host on the Durable Task extension, its extension host killed", () => {
  it("F23-4: kill -9 of the .NET extension host alone mid-run: sas host restarts it, every order Processed, each effect once; killed three times in a minute, sas host gives up", async () => {
    const app = builtApp();
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
