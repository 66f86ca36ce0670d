import { readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { answers } from "../../laptop/http/port-probe.js";
import { runSmoke } from "../../tools/smoke/run-smoke.js";
import {
  type BuiltApp,
  freePorts,
  orderIds,
  type RunningHost,
  sasOrders,
  sendOrders,
  startHost,
  useBuiltApp,
  writeLocalSettings,
} from "./host-process.js";

/**
 * The built Azure Functions app run by `sas host` in a child process, as a user runs it: settings
 * from local.settings.json, orders put on the queue by `sas send`, read back through the HTTP
 * functions with the function key. Everything between is the app's own code on the Azure adapters:
 * Service Bus triggers fed by the broker, Cosmos DB, blob leases on Azurite, the SDK's durable client
 * talking to the local durable runtime.
 */
const { built, hosts, dataFolder } = useBuiltApp();
let app: BuiltApp;
beforeAll(() => {
  app = built();
});

async function get(host: RunningHost, path: string, key?: string) {
  const response = await fetch(`${host.url}${path}`, key ? { headers: { "x-functions-key": key } } : {});
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** Polls each order through GET /api/orders/{id} until all are in a state of `states`. */
async function untilSettled(
  host: RunningHost,
  ids: readonly string[],
  states: readonly string[],
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  const seen = new Map<string, string>();
  while (Date.now() < deadline) {
    for (const id of ids) {
      if (states.includes(seen.get(id) ?? "")) continue;
      const { status, body } = await get(host, `/api/orders/${id}`, host.functionKey);
      if (status === 200) seen.set(id, String(body?.processState));
    }
    if (ids.every((id) => states.includes(seen.get(id) ?? ""))) return seen;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return seen;
}

const TERMINAL = ["Processed", "Compensated", "Error", "CompensationFailed"];
const PARTNER_KEY = "partner-key-from-local-settings";

/**
 * GET /api/stats once the Supervisor's first scan is in its journal, or at the deadline. Its timer's
 * firing is logged as the scan starts, and orders can all be final before the first scan has ended.
 */
async function untilScanJournaled(host: RunningHost, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await get(host, "/api/stats", host.functionKey);
    if (stats.body?.lastScan || Date.now() > deadline) return stats;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function counts(states: ReadonlyMap<string, string>): Record<string, number> {
  const byState: Record<string, number> = {};
  for (const state of states.values()) byState[state] = (byState[state] ?? 0) + 1;
  return byState;
}

describe("sas host", () => {
  it("runs the Azure app: 200 orders from sas send reach Processed, read with the function key", async () => {
    const ports = await freePorts();
    writeLocalSettings(app, ports);
    const data = dataFolder();
    const host = await startHost(app, ports, data);
    hosts.push(host);
    expect(host.stdout()).toContain("SQL: no OrdersSql connection is set");
    expect(host.stdout()).toContain(
      `data protection: the key ring from ${join(data, "data-protection.keys")}`,
    );

    expect(sendOrders(app, 200, 11).sent).toBe(200);
    const ids = orderIds(11, 200);
    const states = await untilSettled(host, ids, ["Processed"], 120_000);
    expect(counts(states)).toEqual({ Processed: 200 });

    // The host's key check: none or a wrong one is 401; the operator commands want the master key.
    expect((await get(host, `/api/orders/${ids[0]}`)).status).toBe(401);
    expect((await get(host, `/api/orders/${ids[0]}`, "not-the-key")).status).toBe(401);
    expect((await get(host, `/api/orders/${ids[0]}?code=${host.functionKey}`)).status).toBe(200);
    const resubmit = (key: string) =>
      fetch(`${host.url}/api/orders/${ids[0]}/resubmit`, {
        method: "POST",
        headers: { "x-functions-key": key, "content-type": "application/json" },
        body: JSON.stringify({ operator: "test", reason: "a processed order cannot be resubmitted" }),
      });
    expect((await resubmit(host.functionKey)).status).toBe(401);
    expect((await resubmit(host.masterKey)).status).toBe(409);

    // Every document the Cosmos DB stand-in stored, as it stored it: payment and shipment references
    // sealed, inventory reservations (classified as neither) in clear.
    const stored = readFileSync(join(data, "cosmos-writes.ndjson"), "utf8");
    expect(stored).toMatch(/res-\d{6}/);
    expect(stored).not.toMatch(/pay-\d{6}|shp-\d{6}/);
    expect(stored).toMatch(/enc1\./);

    // The operator's CLI works against it as against func start, with the keys the host checks.
    const shown = sasOrders(app, host, ["orders", "show", ids[0] ?? "", "--key", host.functionKey, "--json"]);
    expect(shown.status, `sas orders show: ${shown.stderr}`).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ orderId: ids[0], processState: "Processed" });
    expect(sasOrders(app, host, ["orders", "show", ids[0] ?? ""])).toMatchObject({ status: 1 });
    const refused = sasOrders(app, host, [
      ...["orders", "compensate", ids[0] ?? "", "--operator", "test", "--reason", "a test"],
      ...["--key", host.masterKey],
    ]);
    expect(refused.status, `stderr: ${refused.stderr}`).toBe(1);
    expect(refused.stderr).toMatch(/Processed/);

    // The partner stand-in wants the access key sas host generated for this start, which the app's
    // Agents sent (the orders above) and its controls send; the changes want the master key.
    expect((await fetch(`http://127.0.0.1:${ports.partner}/control`)).status).toBe(401);
    const partnerStatus = sasOrders(app, host, ["partner", "status", "--key", host.functionKey]);
    expect(partnerStatus).toMatchObject({ status: 0, stderr: "" });
    expect(partnerStatus.stdout).toContain("faults   transient 0 · permanent 0 · slow 0 · lost reply 0");
    const faults = (key: string) =>
      sasOrders(app, host, ["partner", "faults", "--slow", "0.01", "--key", key]);
    expect(faults(host.functionKey).status).toBe(1);
    const changed = faults(host.masterKey);
    expect(changed).toMatchObject({ status: 0, stderr: "" });
    expect(changed.stdout).toContain("slow 0.01");

    // Both timers fired on their schedules, and the Supervisor's scan is in the journal on Azurite.
    const fired = host
      .events()
      .filter((e) => e.event === "host.timer.fired")
      .map((e) => e.functionName);
    expect(new Set(fired)).toEqual(new Set(["starter", "supervisor"]));
    const stats = await untilScanJournaled(host, 15_000);
    expect(stats.body?.lastScan).toMatchObject({ holder: expect.any(String) });
    expect(stats.body?.counts).toMatchObject({ Processed: 200 });
    // The activity form calls the partner from an activity: nothing went through the Agent's queues.
    const agentQueues = host
      .events()
      .filter((e) => e.event === "host.servicebus.message" && e.functionName !== "submitOrder");
    expect(agentQueues).toEqual([]);
    expect(await host.stop()).toBe(0);
  }, 240_000);

  it("runs the Agent's queue form: requests and replies through the broker's queues", async () => {
    const ports = await freePorts();
    writeLocalSettings(app, ports, { AGENT_MODE: "queue" });
    const host = await startHost(app, ports, dataFolder());
    hosts.push(host);
    sendOrders(app, 40, 12);
    const states = await untilSettled(host, orderIds(12, 40), ["Processed"], 120_000);
    expect(counts(states)).toEqual({ Processed: 40 });
    // Four steps per order, each a request to the Agent's worker and a reply to the orchestration.
    const delivered = host.events().filter((e) => e.event === "host.servicebus.message");
    expect(delivered.filter((e) => e.functionName === "agentWorker").length).toBeGreaterThanOrEqual(160);
    expect(delivered.filter((e) => e.functionName === "agentReplies").length).toBeGreaterThanOrEqual(160);
  }, 240_000);

  it("survives SIGKILL mid-run: restarted on the same data, every order ends Processed, each effect applied once", async () => {
    const ports = await freePorts();
    // Orders claimed but not started when the host died wait out their attempt before the Supervisor resets them.
    // The partner's access key from the settings this time, so the test can read the partner's ledger too.
    writeLocalSettings(app, ports, {
      ATTEMPT_TIMEOUT_MS: "20000",
      STEP_TIMEOUT_MS: "5000",
      PARTNER_ACCESS_KEY: PARTNER_KEY,
    });
    const data = dataFolder();
    const first = await startHost(app, ports, data);
    hosts.push(first);
    sendOrders(app, 200, 13);
    const deadline = Date.now() + 60_000;
    let processed = 0;
    while (processed < 20 && Date.now() < deadline) {
      const stats = await get(first, "/api/stats", first.functionKey);
      processed = Number((stats.body?.counts as Record<string, number> | undefined)?.Processed ?? 0);
    }
    await first.stop("SIGKILL");
    const ids = orderIds(13, 200);
    // Killed mid-run: orders accepted, in flight and still on the queue.
    expect(processed).toBeGreaterThanOrEqual(20);
    expect(processed).toBeLessThan(200);

    const second = await startHost(app, ports, data);
    hosts.push(second);
    const states = await untilSettled(second, ids, TERMINAL, 180_000);
    expect(counts(states)).toEqual({ Processed: 200 });
    const ledgerAnswer = await fetch(`http://127.0.0.1:${ports.partner}/ledger`, {
      headers: { "x-partner-key": PARTNER_KEY },
    });
    const ledger = (await ledgerAnswer.json()) as {
      byOrder: Record<string, { effects: Record<string, { applied: number; undone: number }> }>;
    };
    for (const id of ids) {
      expect(ledger.byOrder[id]?.effects, id).toEqual({
        reserveInventory: { applied: 1, undone: 0 },
        chargePayment: { applied: 1, undone: 0 },
        arrangeShipment: { applied: 1, undone: 0 },
        notifyCustomer: { applied: 1, undone: 0 },
      });
    }
  }, 300_000);

  it("stops at start with a message naming a bad setting, and leaves nothing running", async () => {
    const ports = await freePorts();
    writeLocalSettings(app, ports, { STARTER_SCHEDULE: "*/10 * * * *" });
    const failed = await startHost(app, ports, dataFolder()).catch((error: Error) => error);
    expect(failed).toBeInstanceOf(Error);
    expect(String(failed)).toMatch(/exited with 2[\s\S]*STARTER_SCHEDULE.*six-field/);
    // Checked before anything starts: no stand-in was left listening.
    for (const port of [ports.serviceBus, ports.cosmos, ports.blob, ports.partner, ports.http, ports.store])
      expect(await answers("127.0.0.1", port)).toBe(false);
    // Without a settings file at all, it also says where the sample is.
    rmSync(join(app.root, "local.settings.json"));
    const unset = await startHost(app, ports, dataFolder()).catch((error: Error) => error);
    expect(String(unset)).toMatch(
      /exited with 2[\s\S]*PARTNER_URL[\s\S]*no local\.settings\.json in .*: copy local\.settings\.sample\.json/,
    );
  }, 60_000);
});

/** A server holding `port` on loopback, as another program would. */
async function holdPort(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return server;
}

describe("sas host on a taken HTTP port", () => {
  it("stops with one line naming the port, exit status 2, every stand-in it had started closed", async () => {
    const ports = await freePorts();
    writeLocalSettings(app, ports);
    const holder = await holdPort(ports.http);
    try {
      const failed = await startHost(app, ports, dataFolder()).catch((error: Error) => error);
      expect(String(failed)).toMatch(
        new RegExp(
          `exited with 2[\\s\\S]*sas host: port ${ports.http} on 127\\.0\\.0\\.1 is already in use: stop what holds it, or choose another with --port\n`,
        ),
      );
      expect(String(failed)).not.toContain("EADDRINUSE");
      // The stand-ins had started (the HTTP port is listened on after them) and were closed again.
      expect(String(failed)).toContain('"partner.started"');
      expect(String(failed)).toContain('"partner.stopped"');
      for (const port of [ports.serviceBus, ports.cosmos, ports.blob, ports.partner, ports.store])
        expect(await answers("127.0.0.1", port)).toBe(false);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 120_000);
});

describe("sas host with the storefront", () => {
  it("serves it on the stand-in's queues: 50 orders from npm run smoke, every final status on its private queue", async () => {
    const ports = await freePorts();
    writeLocalSettings(app, ports);
    const data = dataFolder();
    const host = await startHost(app, ports, data);
    hosts.push(host);
    expect(host.storeUrl).toBe(`http://127.0.0.1:${ports.store}`);
    expect(host.stdout()).toContain(`storefront: order book in ${join(data, "storefront")}`);

    const report = await runSmoke({
      store: host.storeUrl ?? "",
      orders: 50,
      timeoutMs: 180_000,
      seed: 17,
      concurrency: 4,
      pollIntervalMs: 500,
    });
    expect(report.unfinished).toEqual([]);
    expect(report.placementErrors).toEqual([]);
    expect(report.ok).toBe(true);
    // No faults at the partner here: every order is completed.
    expect(Object.values(report.finals)).toEqual(Array(50).fill("Processed"));
    for (const orderId of report.placed) {
      // What the storefront heard: the statuses the Scheduler sent to storefront-status, named as replyTo.
      const heard = (await (await fetch(`${host.storeUrl}/api/orders/${orderId}`)).json()) as {
        state: string;
        statuses: { status: string }[];
      };
      expect(heard.state).toBe("Processed");
      expect(heard.statuses.map((s) => s.status)).toEqual(expect.arrayContaining(["received", "completed"]));
      // And what the Scheduler's own record says, read through the Function App with its key.
      const record = await get(host, `/api/orders/${orderId}`, host.functionKey);
      expect(record.body?.processState, orderId).toBe("Processed");
    }
    // Its orders reached the app as any sender's do: through the orders queue's trigger.
    const submitted = host
      .events()
      .filter((e) => e.event === "host.servicebus.message" && e.functionName === "submitOrder");
    expect(submitted.length).toBeGreaterThanOrEqual(50);
    expect(await host.stop()).toBe(0);
  }, 300_000);

  it("stops at start with exit 2 when the storefront's port is taken, leaving nothing running; --no-store skips it", async () => {
    const ports = await freePorts();
    writeLocalSettings(app, ports);
    const holder = await holdPort(ports.store);
    try {
      const failed = await startHost(app, ports, dataFolder()).catch((error: Error) => error);
      expect(String(failed)).toMatch(
        new RegExp(
          `exited with 2[\\s\\S]*the storefront's port ${ports.store} on 127\\.0\\.0\\.1 is already in use`,
        ),
      );
      for (const port of [ports.serviceBus, ports.cosmos, ports.blob, ports.partner, ports.http])
        expect(await answers("127.0.0.1", port)).toBe(false);

      const host = await startHost(app, ports, dataFolder(), { store: false });
      hosts.push(host);
      expect(host.storeUrl).toBeNull();
      expect(host.stdout()).not.toContain("storefront");
      expect(await answers("127.0.0.1", ports.http)).toBe(true);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 120_000);
});
