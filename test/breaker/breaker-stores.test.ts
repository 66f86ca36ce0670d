import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CosmosClient } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBreakerStore } from "../../laptop/sqlite/sqlite-breaker-store.js";
import { type CosmosStandIn, startCosmosServer } from "../../laptop/stand-ins/cosmos-server.js";
import {
  BREAKER_PARTITION,
  breakerId,
  CosmosBreakerStore,
} from "../../src/adapters/cosmos/cosmos-breaker-store.js";
import {
  createCosmosClient,
  ensureStateContainers,
  stateContainers,
} from "../../src/adapters/cosmos/cosmos-client.js";
import { CosmosStateStore } from "../../src/adapters/cosmos/cosmos-state-store.js";
import { type EmbeddedDatabase, openDatabase, schemaVersion } from "../../src/adapters/sqlite/database.js";
import { CLOSED_BREAKER } from "../../src/domain/circuit-breaker.js";
import { PROCESS_STATES } from "../../src/domain/state-record.js";
import { MemoryBreakerStore } from "../support/memory-breaker-store.js";
import { pendingRecord } from "../support/records.js";
import { describeBreakerStoreContract } from "./breaker-store-contract.js";

describeBreakerStoreContract("in memory", async () => {
  const store = new MemoryBreakerStore();
  return { store, otherHandle: async () => store, dispose: async () => {} };
});

describeBreakerStoreContract("SQLite, two connections to one file", async () => {
  const directory = mkdtempSync(join(tmpdir(), "sas-breakers-"));
  const connections: EmbeddedDatabase[] = [];
  const connect = (): SqliteBreakerStore => {
    const db = openDatabase(join(directory, "embedded.db"));
    connections.push(db);
    return new SqliteBreakerStore(db);
  };
  return {
    store: connect(),
    otherHandle: async () => connect(),
    async dispose() {
      for (const db of connections) db.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
});

describe("SQLite breakers table", () => {
  it("comes with migration 11, and a corrupt row is refused with the operation's name", async () => {
    const db = openDatabase(":memory:");
    try {
      expect(schemaVersion(db)).toBeGreaterThanOrEqual(11);
      db.prepare("INSERT INTO breakers (operation, version, state) VALUES ('chargePayment', 1, ?)").run(
        JSON.stringify({ status: "open" }),
      );
      await expect(new SqliteBreakerStore(db).read("chargePayment")).rejects.toThrow(
        /circuit breaker of chargePayment/,
      );
    } finally {
      db.close();
    }
  });
});

describe("Cosmos DB (in-process stand-in)", () => {
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

  /** A database of its own per test, with the state containers as the deployment makes them. */
  async function freshDatabase() {
    const name = `breakers-${++databases}`;
    const containers = await ensureStateContainers(client, name);
    return { name, containers, drop: async () => void (await client.database(name).delete()) };
  }

  describeBreakerStoreContract("Cosmos DB (in-process stand-in), two clients", async () => {
    const { name, containers, drop } = await freshDatabase();
    return {
      store: new CosmosBreakerStore(containers.records),
      otherHandle: async () => new CosmosBreakerStore(stateContainers(otherClient.database(name)).records),
      dispose: drop,
    };
  });

  it("keeps breakers out of every query of records, and apart from an order named like one", async () => {
    const { containers, drop } = await freshDatabase();
    try {
      const breakers = new CosmosBreakerStore(containers.records);
      const states = new CosmosStateStore(containers, { auditEveryMs: null });
      // Order ids may hold ":", so an order can carry a breaker's document id; its partition differs.
      const lookalike = pendingRecord(breakerId("chargePayment"));
      await states.createIfAbsent(lookalike);
      expect((await breakers.write("chargePayment", CLOSED_BREAKER, undefined)).written).toBe(true);

      expect((await states.get(lookalike.orderId))?.orderId).toBe(lookalike.orderId);
      const recent = await states.listRecent({ state: null, maxItems: 10 });
      expect(recent.items.map((record) => record.orderId)).toEqual([lookalike.orderId]);
      const counts = await states.countByState();
      expect(PROCESS_STATES.reduce((sum, state) => sum + counts[state], 0)).toBe(1);
      expect(await breakers.readAll()).toEqual([
        { operation: "chargePayment", state: CLOSED_BREAKER, version: expect.any(String) },
      ]);
      const { resource } = await containers.records
        .item(breakerId("chargePayment"), BREAKER_PARTITION)
        .read();
      expect(resource).toMatchObject({ orderId: BREAKER_PARTITION, operation: "chargePayment" });
      expect(resource).not.toHaveProperty("ttl");
    } finally {
      await drop();
    }
  });
});
