/**
 * `sas host` on Microsoft's Durable Task extension, its Node process killed with SIGKILL mid-run: the
 * extension host ends with it, and a restart on the same data finishes every order (extension-hosts.ts).
 */
import { expect, it } from "vitest";
import {
  describeWithDotnet,
  expectEachEffectOnce,
  extensionPids,
  isRunning,
  storagePorts,
  untilProcessed,
  untilSomeProcessed,
  useExtensionApp,
  writeCrashSettings,
} from "./extension-hosts.js";
import { orderIds, sendOrders, startHost } from "./host-process.js";

const { built: builtApp, hosts, dataFolder } = useExtensionApp();

describeWithDotnet("sas host on the Durable Task extension, its Node process killed", () => {
  it("F23-5: kill -9 of the sas host's Node process mid-run: its extension host ends with it, the restart finishes every order, each effect once", async () => {
    const app = builtApp();
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
