// The stores `npm run bench:supervisor` measures, seeded with `seed-records.ts`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PAGED_QUERIES, SqliteStateStore } from "../laptop/sqlite/sqlite-state-store.js";
import { ORDER_STATE_CONTAINER } from "../src/adapters/cosmos/container-definition.js";
import {
  type CosmosConnection,
  createCosmosClient,
  ensureStateContainers,
} from "../src/adapters/cosmos/cosmos-client.js";
import { type AuditReport, CosmosStateStore } from "../src/adapters/cosmos/cosmos-state-store.js";
import { toDocument } from "../src/adapters/cosmos/state-document.js";
import { openDatabase } from "../src/adapters/sqlite/database.js";
import type { IsoInstant } from "../src/domain/time.js";
import type { StateStore } from "../src/ports/state-store.js";
import { kindOf, seedRecord } from "./seed-records.js";
import { standInBatch } from "./stand-in-batch.js";

export interface SeededStore {
  readonly store: StateStore;
  /** The Cosmos DB store's audit of its recovery index, which the bench's scans leave out. */
  readonly audit?: () => Promise<AuditReport>;
  readonly seedMs: number;
  /** How the store answers the expired query, where it can say. */
  readonly plan: string;
  dispose(): Promise<void>;
}

const canExpire = (i: number) => ["expired", "expiredCompensation", "running"].includes(kindOf(i));

/** A database file of its own, every record written through the store, 10,000 to a transaction. */
export async function seedSqlite(size: number, now: IsoInstant): Promise<SeededStore> {
  const dir = mkdtempSync(join(tmpdir(), "sas-bench-supervisor-"));
  const db = openDatabase(join(dir, "state.sqlite"));
  const store = new SqliteStateStore(db);
  const started = performance.now();
  for (let from = 0; from < size; from += 10_000) {
    db.exec("BEGIN");
    for (let i = from; i < Math.min(size, from + 10_000); i++) await store.createIfAbsent(seedRecord(i, now));
    db.exec("COMMIT");
  }
  const seedMs = performance.now() - started;
  const plan = (
    db.prepare(`EXPLAIN QUERY PLAN ${PAGED_QUERIES.expired}`).all(now, "", "", 101) as { detail: string }[]
  )
    .map((row) => row.detail)
    .join("; ");
  return {
    store,
    seedMs,
    plan,
    dispose: async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A database of its own on the stand-in. Records that cannot expire are loaded in bulk as the store
 * writes them (they have no recovery entry); those that can go through the store, which writes their
 * entries.
 */
export async function seedCosmos(
  connection: CosmosConnection,
  size: number,
  now: IsoInstant,
): Promise<SeededStore> {
  const client = createCosmosClient(connection);
  const batch = standInBatch(connection.endpoint);
  const databaseName = `bench-${size}-${Date.now()}`;
  const containers = await ensureStateContainers(client, databaseName);
  // The audit reads the state container, which the stand-in does linearly and slowly: timed apart.
  const store = new CosmosStateStore(containers, { auditEveryMs: null });
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let from = 0; from < size; from += 1_000) {
    const documents: object[] = [];
    for (let i = from; i < Math.min(size, from + 1_000); i++) {
      if (!canExpire(i)) documents.push(toDocument(seedRecord(i, now)));
    }
    inFlight.push(batch.create(databaseName, ORDER_STATE_CONTAINER.id, documents));
    // Two requests in flight keep the stand-in busy while the next one is built.
    if (inFlight.length >= 2) await inFlight.shift();
  }
  await Promise.all(inFlight);
  batch.close();
  for (let i = 0; i < size; i++) if (canExpire(i)) await store.createIfAbsent(seedRecord(i, now));
  const seedMs = performance.now() - started;
  return {
    store,
    audit: () => store.auditRecoveryIndex(),
    seedMs,
    plan: "recovery index: one query of the entries due, one point read per entry",
    dispose: async () => {
      await client.database(databaseName).delete();
      client.dispose();
    },
  };
}
