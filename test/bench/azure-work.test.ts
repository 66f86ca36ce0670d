import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CosmosClient } from "@azure/cosmos";
import { ServiceBusClient } from "@azure/service-bus";
import { afterAll, describe, expect, it } from "vitest";
import { cosmosDifference, measureAzureWork, serviceBusDifference } from "../../bench/azure-work.js";
import { layoutOf } from "../../bench/checkout-app.js";
import { startCountingCosmos, UNCOUNTED } from "../../bench/cosmos-counter.js";
import { startCountingServiceBus } from "../../bench/service-bus-counter.js";

const ROOT = join(import.meta.dirname, "../..");
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function checkout(files: Record<string, string>): string {
  const folder = mkdtempSync(join(tmpdir(), "sas-layout-"));
  folders.push(folder);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(folder, path, ".."), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  return folder;
}

describe("a checkout's layout", () => {
  it("is this one's: the CLI under laptop/, a host with a storefront to leave out, a durable engine to choose and a summary to stop", () => {
    // The local engine: the Azure path's work is compared between builds on one engine. No summary:
    // its reads of the statistics would be counted as the app's requests.
    expect(layoutOf(ROOT)).toEqual({
      cli: "laptop/cli/main.ts",
      hostFlags: ["--no-store", "--durable", "local", "--no-summary"],
    });
  });

  it("is the one before the move: the CLI under src/local/, a host without a storefront", () => {
    const old = checkout({ "src/local/cli.ts": 'options: { port: { type: "string" } }' });
    expect(layoutOf(old)).toEqual({ cli: "src/local/cli.ts", hostFlags: [] });
    expect(() => layoutOf(checkout({ "README.md": "" }))).toThrow(/no sas CLI found/);
  });
});

describe("the counts of a batch", () => {
  it("are what happened between two snapshots, kinds that did not change left out", () => {
    const before = {
      byKind: { metadata: 4, "records.create": 2 },
      requests: 6,
      requestUnitsEstimate: 12,
      requestUnitsByKind: { metadata: 0, "records.create": 12 },
      bytesWritten: { records: 800 },
    };
    const after = {
      byKind: { metadata: 4, "records.create": 5, "records.replace.412": 1 },
      requests: 10,
      requestUnitsEstimate: 31,
      requestUnitsByKind: { metadata: 0, "records.create": 30, "records.replace.412": 1 },
      bytesWritten: { records: 2_000 },
    };
    expect(cosmosDifference(after, before)).toEqual({
      byKind: { "records.create": 3, "records.replace.412": 1 },
      requests: 4,
      requestUnitsEstimate: 19,
      requestUnitsByKind: { "records.create": 18, "records.replace.412": 1 },
      bytesWritten: { records: 1_200 },
    });
    expect(
      serviceBusDifference(
        { byKind: { "orders.send": 5, "orders.peek": 1 }, operations: 6 },
        { byKind: { "orders.peek": 1 }, operations: 1 },
      ),
    ).toEqual({ byKind: { "orders.send": 5 }, operations: 5 });
  });
});

describe("the counting stand-ins", () => {
  it("count the Cosmos DB requests of a client, but not those of one marked uncounted", async () => {
    const cosmos = await startCountingCosmos();
    const client = (suffix?: string) =>
      new CosmosClient({
        endpoint: cosmos.endpoint,
        key: "any",
        connectionPolicy: { enableEndpointDiscovery: false },
        agent: new Agent({ rejectUnauthorized: false }),
        ...(suffix ? { userAgentSuffix: suffix } : {}),
      });
    const counted = client();
    const uncounted = client(UNCOUNTED);
    try {
      const { database } = await counted.databases.createIfNotExists({ id: "orders" });
      const { container } = await database.containers.createIfNotExists({
        id: "orderState",
        partitionKey: { paths: ["/orderId"] },
      });
      await container.items.create({ id: "o-1", orderId: "o-1", processState: "Pending" });
      await container.item("o-1", "o-1").read();
      const before = cosmos.counts();
      expect(before.byKind).toMatchObject({ "records.create": 1, "records.read": 1 });
      const query = "SELECT c.processState FROM c";
      const seen = await uncounted.database("orders").container("orderState").items.query(query).fetchAll();
      expect(seen.resources).toEqual([{ processState: "Pending" }]);
      expect(cosmos.counts()).toEqual(before);
    } finally {
      counted.dispose();
      uncounted.dispose();
      await cosmos.stop();
    }
  });

  it("count each queue's messages sent, received and completed, with the queues a checkout declares", async () => {
    const serviceBus = await startCountingServiceBus(ROOT);
    const client = new ServiceBusClient(serviceBus.connectionString);
    try {
      await client
        .createSender("orders")
        .sendMessages([1, 2, 3].map((n) => ({ body: n, messageId: `m-${n}` })));
      const receiver = client.createReceiver("orders");
      const received = [];
      while (received.length < 3) {
        received.push(...(await receiver.receiveMessages(3 - received.length, { maxWaitTimeInMs: 2_000 })));
      }
      for (const message of received) await receiver.completeMessage(message);
      expect(serviceBus.counts()).toEqual({
        byKind: { "orders.send": 3, "orders.receive": 3, "orders.complete": 3 },
        operations: 9,
      });
    } finally {
      await client.close();
      await serviceBus.stop();
    }
  });
});

describe("measureAzureWork on this checkout", () => {
  it("runs 20 orders through sas host to the end and counts their work on the Azure path", async () => {
    const work = await measureAzureWork({ checkout: ROOT, orders: 20 });
    expect(work.orders).toBe(20);
    expect(Object.values(work.states).reduce((sum, n) => sum + n, 0)).toBe(20);
    // Each order's record is created once in the state container, and its message sent and completed once.
    expect(work.cosmos.byKind["records.create"]).toBe(20);
    expect(work.cosmos.requestUnitsEstimate).toBeGreaterThan(work.cosmos.requests);
    expect(work.serviceBus?.byKind).toMatchObject({ "orders.send": 20, "orders.complete": 20 });
    expect(work.durable?.instances).toBeGreaterThanOrEqual(20);
    expect(work.durable?.activities).toBeGreaterThanOrEqual(20);
    // Reserve, charge, ship and notify: a partner call each, at least.
    expect(work.partnerCalls).toBeGreaterThanOrEqual(80);
  }, 120_000);
});
