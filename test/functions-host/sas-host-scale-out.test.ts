/**
 * Two `sas host`s on Microsoft's Durable Task extension and one task hub, as scaled-out Function App
 * instances: they share the stand-ins, the orders table and the key ring (extension-hosts.ts).
 */
import { hostname } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { freePorts as distinctFreePorts } from "../../laptop/http/free-ports.js";
import { tableRows } from "../../laptop/stand-ins/azurite-tables.js";
import {
  describeWithDotnet,
  expectEachEffectOnce,
  HUB,
  storagePorts,
  tables,
  untilProcessed,
  useExtensionApp,
  writeExtensionSettings,
} from "./extension-hosts.js";
import { orderIds, type RunningHost, sendOrders, startHost } from "./host-process.js";

const { built: builtApp, hosts, dataFolder } = useExtensionApp();

describeWithDotnet("two sas hosts on one task hub", () => {
  it("share the orchestrations' work, as scaled-out Function App instances do: every order Processed, effects once", async () => {
    const app = builtApp();
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
