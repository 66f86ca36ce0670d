import type { Agent } from "node:https";
import { type Container, CosmosClient } from "@azure/cosmos";
import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CosmosStandIn, startCosmosServer } from "../../laptop/stand-ins/cosmos-server.js";
import {
  ORDER_RECOVERY_CONTAINER,
  ORDER_STATE_CONTAINER,
} from "../../src/adapters/cosmos/container-definition.js";
import {
  type ContainerDefinition,
  containerRequest,
  cosmosClientOptions,
  createCosmosClient,
  ensureStateContainers,
  type StateContainers,
  stateContainers,
} from "../../src/adapters/cosmos/cosmos-client.js";
import { CosmosStateStore } from "../../src/adapters/cosmos/cosmos-state-store.js";
import { stateRecordSchema } from "../../src/domain/state-record.js";
import { InvalidContinuationTokenError } from "../../src/ports/store-errors.js";
import { describeRetentionStoreContract } from "../contracts/retention-store.contract.js";
import { describeStateReadModelContract } from "../contracts/state-read-model.contract.js";
import { describeStateStoreContract } from "../contracts/state-store.contract.js";
import type { StateStoreFixture } from "../contracts/state-store-fixture.js";
import { pendingRecord, T0 } from "../support/records.js";

let server: CosmosStandIn;
let client: CosmosClient;
let otherClient: CosmosClient;
let databases = 0;

beforeAll(async () => {
  server = await startCosmosServer();
  client = createCosmosClient(server.connection);
  otherClient = createCosmosClient(server.connection);
});

afterAll(async () => {
  client?.dispose();
  otherClient?.dispose();
  await server?.stop();
});

/** A database of its own, so no test sees another's records. */
async function freshDatabase(): Promise<{
  name: string;
  containers: StateContainers;
  container: Container;
  drop(): Promise<void>;
}> {
  const name = `state-${++databases}`;
  const containers = await ensureStateContainers(client, name);
  return {
    name,
    containers,
    container: containers.records,
    drop: async () => void (await client.database(name).delete()),
  };
}

async function twoClients(): Promise<StateStoreFixture<CosmosStateStore>> {
  const { name, containers, drop } = await freshDatabase();
  return {
    store: new CosmosStateStore(containers),
    secondHandle: async () => new CosmosStateStore(stateContainers(otherClient.database(name))),
    dispose: drop,
  };
}

const STAND_IN = "Cosmos DB (in-process stand-in), two clients";
describeStateStoreContract(STAND_IN, twoClients);
describeStateReadModelContract(STAND_IN, twoClients);
describeRetentionStoreContract(STAND_IN, twoClients);

/** As in Azure: retired records get a ttl, and with it their order's tombstone beside them. */
async function withRetention(): Promise<StateStoreFixture<CosmosStateStore>> {
  const { containers, drop } = await freshDatabase();
  return { store: new CosmosStateStore(containers, { retentionSeconds: 30 * 86_400 }), dispose: drop };
}

const WITH_RETENTION = "Cosmos DB (in-process stand-in), with a retention";
describeStateReadModelContract(WITH_RETENTION, withRetention);
describeRetentionStoreContract(WITH_RETENTION, withRetention);

describe("Cosmos DB state store", () => {
  it("reports the request charge of every round trip of a page", async () => {
    const { containers, container, drop } = await freshDatabase();
    try {
      const store = new CosmosStateStore(containers);
      for (let i = 0; i < 5; i++) await store.createIfAbsent(pendingRecord(`ord-${i}`));
      // The stand-in charges a flat 1 RU per request: one round trip per page here.
      const page = await store.queryClaimable({ now: T0, maxItems: 3 });
      expect(page.cost).toEqual({
        requestUnits: 1,
        itemsReturned: 3,
        documentsRead: 4, // and the look-ahead item that tells whether another page exists
        durationMs: expect.any(Number),
      });
      expect(page.cost.durationMs).toBeGreaterThan(0);

      // Cosmos DB may answer with fewer items than asked; the page keeps fetching and sums the charges.
      const shortAnswers = new CosmosStateStore({ ...containers, records: withMaxItemCount(container, 2) });
      const gathered = await shortAnswers.queryClaimable({ now: T0, maxItems: 4 });
      expect(gathered.items.map((r) => r.orderId)).toEqual(["ord-0", "ord-1", "ord-2", "ord-3"]);
      expect(gathered.cost.requestUnits).toBe(3);
      const rest = await shortAnswers.queryClaimable({
        now: T0,
        maxItems: 4,
        continuationToken: gathered.continuationToken,
      });
      expect(rest.items.map((r) => r.orderId)).toEqual(["ord-4"]);
      expect(rest.continuationToken).toBeNull();
    } finally {
      await drop();
    }
  });

  it("stores id = orderId and returns records without Cosmos system properties", async () => {
    const { containers, container, drop } = await freshDatabase();
    try {
      const store = new CosmosStateStore(containers);
      const created = await store.createIfAbsent(pendingRecord("ord-sys"));
      const { resource: raw } = await container.item("ord-sys", "ord-sys").read();
      expect(raw).toMatchObject({
        id: "ord-sys",
        orderId: "ord-sys",
        _rid: expect.any(String),
        _ts: expect.any(Number),
      });
      expect(raw?._etag).toBe(created.created && created.record._etag);

      const fields = [...Object.keys(stateRecordSchema.shape), "_etag"].sort();
      expect(Object.keys((await store.get("ord-sys")) ?? {}).sort()).toEqual(fields);
      const [claimable] = (await store.queryClaimable({ now: T0, maxItems: 1 })).items;
      expect(Object.keys(claimable ?? {}).sort()).toEqual(fields);

      // A system property this code has never seen is dropped too, not refused by the strict schema.
      await container.items.upsert({ ...raw, _lsn: 7 });
      expect((await store.get("ord-sys"))?.orderId).toBe("ord-sys");
    } finally {
      await drop();
    }
  });

  it("gives Processed and Compensated documents the retention as ttl, and no other document one", async () => {
    const { containers, container, drop } = await freshDatabase();
    try {
      const store = new CosmosStateStore(containers, { retentionSeconds: 30 * 86_400 });
      const ttlOf = async (orderId: string) =>
        ((await container.item(orderId, orderId).read()).resource as { ttl?: number } | undefined)?.ttl;
      for (const processState of ["Processed", "Compensated", "Error", "CompensationFailed"] as const) {
        await store.createIfAbsent(pendingRecord(`ord-${processState}`, { processState }));
      }
      expect(await ttlOf("ord-Processed")).toBe(2_592_000);
      expect(await ttlOf("ord-Compensated")).toBe(2_592_000);
      expect(await ttlOf("ord-Error")).toBeUndefined();
      expect(await ttlOf("ord-CompensationFailed")).toBeUndefined();
      // The record read back has no ttl field (the strict schema would refuse one).
      expect(Object.keys((await store.get("ord-Processed")) ?? {})).not.toContain("ttl");

      // A replace writes the whole document: a record that left a retired state loses its ttl.
      const done = await store.get("ord-Processed");
      if (!done) throw new Error("no record");
      const { _etag, ...fields } = done;
      const moved = await store.replace({ ...fields, processState: "Error" }, _etag);
      expect(moved.ok).toBe(true);
      expect(await ttlOf("ord-Processed")).toBeUndefined();

      // Without a retention, nothing gets a ttl.
      await new CosmosStateStore(containers).createIfAbsent(
        pendingRecord("ord-kept", { processState: "Processed" }),
      );
      expect(await ttlOf("ord-kept")).toBeUndefined();
    } finally {
      await drop();
    }
  });

  it("writes a finished order's tombstone with the write that gives its record a ttl, and with no other", async () => {
    const { containers, container, drop } = await freshDatabase();
    try {
      const store = new CosmosStateStore(containers, { retentionSeconds: 30 * 86_400 });
      const raw = async (id: string, orderId: string) => (await container.item(id, orderId).read()).resource;
      const created = await store.createIfAbsent(pendingRecord("ord-t"));
      if (!created.created) throw new Error("not created");
      expect(await store.getRetired("ord-t")).toBeUndefined();

      const { _etag, ...pending } = created.record;
      const finished = {
        ...pending,
        processState: "Processed" as const,
        attempt: 2,
        updatedAt: "2026-01-02T00:00:00.000Z",
      };
      // A write that loses its race writes neither the record nor the tombstone.
      expect((await store.replace(finished, '"stale"')).ok).toBe(false);
      expect(await store.getRetired("ord-t")).toBeUndefined();
      expect((await store.replace({ ...finished, orderId: "ord-none" }, _etag)).ok).toBe(false);
      expect(await store.getRetired("ord-none")).toBeUndefined();

      const replaced = await store.replace(finished, _etag);
      if (!replaced.ok) throw replaced.error;
      expect(await store.get("ord-t")).toEqual(replaced.value);
      expect(await store.getRetired("ord-t")).toEqual({
        orderId: "ord-t",
        finalState: "Processed",
        attempt: 2,
        retiredAt: "2026-01-02T00:00:00.000Z",
        purgedAt: null,
        replyTo: pending.replyTo,
      });
      // Beside the record in its partition, with no ttl: it stays when the record expires.
      const tombstone = await raw("retired:ord-t", "ord-t");
      expect(tombstone).toMatchObject({ id: "retired:ord-t", orderId: "ord-t" });
      expect(tombstone).not.toHaveProperty("ttl");
      expect(tombstone).not.toHaveProperty("updatedAt");
      expect(tombstone).not.toHaveProperty("processState");
      expect((await raw("ord-t", "ord-t"))?.ttl).toBe(2_592_000);

      // As the time to live would: the record goes, the tombstone stays.
      await container.item("ord-t", "ord-t").delete();
      expect(await store.get("ord-t")).toBeUndefined();
      expect((await store.getRetired("ord-t"))?.finalState).toBe("Processed");

      // A record created finished gets one too; a second create changes nothing.
      await store.createIfAbsent(pendingRecord("ord-c", { processState: "Compensated" }));
      expect((await store.getRetired("ord-c"))?.finalState).toBe("Compensated");
      expect((await store.createIfAbsent(pendingRecord("ord-c"))).created).toBe(false);
      // Without a retention nothing expires, and no write but retention's delete writes a tombstone.
      await new CosmosStateStore(containers).createIfAbsent(
        pendingRecord("ord-k", { processState: "Processed" }),
      );
      expect(await store.getRetired("ord-k")).toBeUndefined();
    } finally {
      await drop();
    }
  });

  it("F24-8, F24-10: reads an older tombstone as of unknown replyTo, and refuses a malformed one, naming it", async () => {
    const { containers, container, drop } = await freshDatabase();
    try {
      const store = new CosmosStateStore(containers);
      const tombstone = {
        id: "retired:ord-old",
        orderId: "ord-old",
        finalState: "Processed",
        attempt: 2,
        retiredAt: "2026-01-02T00:00:00.000Z",
        purgedAt: null,
      };
      await container.items.create(tombstone);
      const read = await store.getRetired("ord-old");
      const { id: _id, ...fields } = tombstone;
      expect(read).toEqual(fields);
      expect(read).not.toHaveProperty("replyTo");
      await container.items.create({ ...tombstone, id: "retired:ord-bad", orderId: "ord-bad", attempt: "2" });
      await expect(store.getRetired("ord-bad")).rejects.toThrow(
        /^invalid tombstone document retired:ord-bad: attempt: /,
      );
    } finally {
      await drop();
    }
  });

  it("creates the state container with time to live on and no default expiry", async () => {
    const { container, drop } = await freshDatabase();
    try {
      const { resource } = await container.read();
      expect(resource?.defaultTtl).toBe(-1);
    } finally {
      await drop();
    }
  });

  it("refuses to read a document that is not a state record, or whose id is not its orderId", async () => {
    const { containers, container, drop } = await freshDatabase();
    try {
      const store = new CosmosStateStore(containers);
      await container.items.create({ ...pendingRecord("ord-odd"), id: "ord-odd", processState: "Finished" });
      await expect(store.get("ord-odd")).rejects.toThrow(/state document ord-odd: .*processState/);
      await container.items.create({ ...pendingRecord("ord-other"), id: "ord-moved" });
      await expect(store.queryClaimable({ now: T0, maxItems: 5 })).rejects.toThrow(/id must equal orderId/);
    } finally {
      await drop();
    }
  });

  it("refuses continuation tokens it did not issue for that query", async () => {
    const { containers, container, drop } = await freshDatabase();
    try {
      const store = new CosmosStateStore(containers);
      for (let i = 0; i < 3; i++) await store.createIfAbsent(pendingRecord(`ord-${i}`));
      const iterator = container.items.query("SELECT * FROM c", { maxItemCount: 1 });
      const sdkToken = (await iterator.fetchNext()).continuationToken;
      expect(sdkToken).toEqual(expect.any(String));
      const foreign = [
        sdkToken ?? "",
        Buffer.from(JSON.stringify(["claimable", T0, "ord-0"])).toString("base64url"),
        Buffer.from(JSON.stringify([2, "claimable", T0, "ord-0"])).toString("base64url"),
      ];
      for (const continuationToken of foreign) {
        await expect(
          store.queryClaimable({ now: T0, maxItems: 1, continuationToken }),
        ).rejects.toBeInstanceOf(InvalidContinuationTokenError);
      }
      const own = (await store.queryClaimable({ now: T0, maxItems: 1 })).continuationToken;
      expect(own).toEqual(expect.any(String));
      await expect(store.queryExpired({ now: T0, maxItems: 1, continuationToken: own })).rejects.toThrow(
        /issued for the claimable query/,
      );
    } finally {
      await drop();
    }
  });
});

describe("Cosmos DB state store containers", () => {
  it("are created from their one definition each, once, with their indexing policies", async () => {
    const { name, containers, drop } = await freshDatabase();
    try {
      const definitions: [Container, ContainerDefinition][] = [
        [containers.records, ORDER_STATE_CONTAINER],
        [containers.recovery, ORDER_RECOVERY_CONTAINER],
      ];
      for (const [container, definition] of definitions) {
        const { resource } = await container.read();
        expect(resource?.id).toBe(definition.id);
        expect(resource?.partitionKey).toEqual(definition.partitionKey);
        expect(resource?.indexingPolicy).toEqual(definition.indexingPolicy);
      }
      const again = await ensureStateContainers(client, name);
      expect([again.records.id, again.recovery.id]).toEqual([
        ORDER_STATE_CONTAINER.id,
        ORDER_RECOVERY_CONTAINER.id,
      ]);
      expect(stateContainers(client.database(name)).recovery.id).toBe(ORDER_RECOVERY_CONTAINER.id);
    } finally {
      await drop();
    }
  });

  it("need their composite indexes: the queries' ORDER BY is refused without them", async () => {
    const { resource } = await client.databases.createIfNotExists({ id: "no-composites" });
    const database = client.database(resource?.id ?? "");
    const withoutComposites = async (definition: ContainerDefinition) => {
      const request = containerRequest(definition);
      const { container } = await database.containers.create({
        ...request,
        id: `${request.id}-bare`,
        indexingPolicy: { ...request.indexingPolicy, compositeIndexes: [] },
      });
      return container;
    };
    try {
      const records = await withoutComposites(ORDER_STATE_CONTAINER);
      const recovery = await withoutComposites(ORDER_RECOVERY_CONTAINER);
      const bareRecords = new CosmosStateStore({ ...stateContainers(database), records });
      await expect(bareRecords.queryClaimable({ now: T0, maxItems: 1 })).rejects.toThrow(/composite index/);
      await expect(bareRecords.oldestPending()).rejects.toThrow(/composite index/);
      const bareIndex = new CosmosStateStore({ records, recovery });
      await expect(bareIndex.queryExpired({ now: T0, maxItems: 1 })).rejects.toThrow(/composite index/);
    } finally {
      await database.delete();
    }
  });
});

describe("Cosmos DB client", () => {
  const endpoint = "https://account.documents.azure.com:443/";

  it("signs with the key when one is given, with Entra ID otherwise", () => {
    const keyed = cosmosClientOptions({ endpoint, key: "a2V5" });
    expect(keyed.key).toBe("a2V5");
    expect(keyed.aadCredentials).toBeUndefined();

    const identity = cosmosClientOptions({ endpoint });
    expect(identity.key).toBeUndefined();
    expect(identity.aadCredentials).toBeInstanceOf(DefaultAzureCredential);

    const credential = fakeCredential();
    expect(cosmosClientOptions({ endpoint, credential }).aadCredentials).toBe(credential);
    expect(() => cosmosClientOptions({ endpoint, key: " " })).toThrow(/empty/);
  });

  it("verifies TLS and discovers endpoints unless told otherwise, and never relaxes TLS for Azure", () => {
    const azure = cosmosClientOptions({ endpoint });
    expect(azure.agent).toBeUndefined();
    expect(azure.connectionPolicy?.enableEndpointDiscovery).toBe(true);

    const emulator = cosmosClientOptions({ endpoint, key: "a2V5", allowSelfSignedCertificate: true });
    expect((emulator.agent as Agent).options.rejectUnauthorized).toBe(false);
    expect(emulator.connectionPolicy?.enableEndpointDiscovery).toBe(false);
    const discovering = { endpoint, key: "k", allowSelfSignedCertificate: true, endpointDiscovery: true };
    expect(cosmosClientOptions(discovering).connectionPolicy?.enableEndpointDiscovery).toBe(true);

    expect(() => cosmosClientOptions({ endpoint, allowSelfSignedCertificate: true })).toThrow(/key/);
  });

  it("sends a master-key signature or an Entra ID token, as chosen", async () => {
    const sent = () => server.requests.at(-1)?.authorization ?? "";
    await client.databases.readAll().fetchAll();
    expect(decodeURIComponent(sent())).toMatch(/^type=master&ver=1\.0&sig=/);

    const emulatorTransport = cosmosClientOptions(server.connection);
    const viaIdentity = new CosmosClient({
      ...cosmosClientOptions({ endpoint: server.endpoint, credential: fakeCredential() }),
      // The stand-in's certificate needs the emulator transport; the sign-in stays the identity one.
      ...(emulatorTransport.agent ? { agent: emulatorTransport.agent } : {}),
      connectionPolicy: { enableEndpointDiscovery: false },
    });
    try {
      await viaIdentity.databases.readAll().fetchAll();
      expect(decodeURIComponent(sent())).toBe("type=aad&ver=1.0&sig=token-for-test");
    } finally {
      viaIdentity.dispose();
    }
  });
});

function fakeCredential(): TokenCredential {
  return { getToken: async () => ({ token: "token-for-test", expiresOnTimestamp: Date.now() + 3_600_000 }) };
}

/** The container, with every query answered in round trips of at most `n` items. */
function withMaxItemCount(container: Container, n: number): Container {
  const items = container.items;
  const query: typeof items.query = (spec: Parameters<typeof items.query>[0], options = {}) =>
    items.query(spec, { ...options, maxItemCount: n });
  const limitedItems = Object.assign(Object.create(items) as typeof items, { query });
  return new Proxy(container, {
    get: (target, name) => (name === "items" ? limitedItems : Reflect.get(target, name)),
  });
}
