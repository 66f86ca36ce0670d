import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CosmosStandIn, startCosmosServer } from "../../laptop/stand-ins/cosmos-server.js";
import { createCosmosClient, ensureStateContainers } from "../../src/adapters/cosmos/cosmos-client.js";

const folders: string[] = [];
const servers: CosmosStandIn[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function open(journal: string) {
  const server = await startCosmosServer({ journal });
  servers.push(server);
  const client = createCosmosClient(server.connection);
  const { records } = await ensureStateContainers(client, "orders");
  return { server, client, records };
}

describe("the Cosmos DB stand-in with a journal", () => {
  it("comes back after a restart with what its answered writes left, conditional ones included", async () => {
    const folder = mkdtempSync(join(tmpdir(), "sas-cosmos-"));
    folders.push(folder);
    const journal = join(folder, "cosmos.ndjson");
    const first = await open(journal);
    await first.records.items.create({ id: "a", orderId: "a", state: "Pending" });
    const { resource: b } = await first.records.items.upsert({ id: "b", orderId: "b", state: "Pending" });
    await first.records.items.create({ id: "c", orderId: "c", state: "Pending" });
    // A replace under the etag it read, one refused for a stale etag, a delete and a patch.
    await first.records.item("b", "b").replace(
      { id: "b", orderId: "b", state: "Processing" },
      {
        accessCondition: { type: "IfMatch", condition: b?._etag ?? "" },
      },
    );
    await expect(
      first.records.item("b", "b").replace(
        { id: "b", orderId: "b", state: "Lost" },
        {
          accessCondition: { type: "IfMatch", condition: b?._etag ?? "" },
        },
      ),
    ).rejects.toMatchObject({ code: 412 });
    await first.records.item("c", "c").delete();
    await first.records.item("a", "a").patch([{ op: "replace", path: "/state", value: "Processed" }]);
    first.client.dispose();
    await first.server.stop();
    servers.pop();

    const second = await open(journal);
    const { resources } = await second.records.items
      .query<{ id: string; state: string }>("SELECT c.id, c.state FROM c ORDER BY c.id")
      .fetchAll();
    expect(resources).toEqual([
      { id: "a", state: "Processed" },
      { id: "b", state: "Processing" },
    ]);
    second.client.dispose();
  });

  it("keeps nothing without a journal", async () => {
    const server = await startCosmosServer();
    servers.push(server);
    const client = createCosmosClient(server.connection);
    const { records } = await ensureStateContainers(client, "orders");
    await records.items.create({ id: "a", orderId: "a" });
    client.dispose();
    await server.stop();
    servers.pop();
    const again = await startCosmosServer();
    servers.push(again);
    const fresh = createCosmosClient(again.connection);
    await expect(fresh.database("orders").read()).rejects.toMatchObject({ code: 404 });
    fresh.dispose();
  });
});
