import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CosmosStandIn, startCosmosServer } from "../../laptop/stand-ins/cosmos-server.js";
import {
  createCosmosClient,
  ensureStateContainers,
  type StateContainers,
} from "../../src/adapters/cosmos/cosmos-client.js";
import { CosmosStateStore } from "../../src/adapters/cosmos/cosmos-state-store.js";
import { AesGcmFieldCipher } from "../../src/adapters/crypto/aes-gcm-field-cipher.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { SqliteStateStore } from "../../src/adapters/sqlite/sqlite-state-store.js";
import { parseStateRecord, STATE_SCHEMA_VERSION } from "../../src/domain/state-record.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { ProtectedStateStore } from "../../src/state/protected-state-store.js";

/** Records as version 1 of the app stored them, captured from a `sas demo` run: every reference in clear. */
const FIXTURES = JSON.parse(
  readFileSync(join(import.meta.dirname, "../fixtures/state-records-v1.json"), "utf8"),
) as { processed: Record<string, unknown>; compensated: Record<string, unknown> };
const V1 = [FIXTURES.processed, FIXTURES.compensated];

function cipher() {
  const key = { id: "k1", key: randomBytes(32) };
  return new AesGcmFieldCipher({ current: key, keys: [key] });
}

describe("state records of the previous schema version", () => {
  it("are version 1 with references in clear, as stored", () => {
    expect(V1.map((r) => r.schemaVersion)).toEqual([1, 1]);
    expect(JSON.stringify(FIXTURES.processed)).toMatch(/"pay-\d{6}"/);
  });

  it("are upgraded on read to the current version, every other field kept", () => {
    for (const v1 of V1) {
      const parsed = parseStateRecord(v1);
      // A field added since with a default (none of its host's interruptions spared yet) reads as that default.
      expect(parsed.ok && parsed.value).toEqual({
        ...v1,
        schemaVersion: STATE_SCHEMA_VERSION,
        hostInterruptions: 0,
      });
    }
  });

  it("refuse a version no upgrade reaches and one from a later release, saying which", () => {
    const older = parseStateRecord({ ...FIXTURES.processed, schemaVersion: 0 });
    expect(!older.ok && older.error.message).toMatch(
      /schemaVersion: is 0, older than the 2 this deployment reads/,
    );
    const newer = parseStateRecord({ ...FIXTURES.processed, schemaVersion: 3 });
    expect(!newer.ok && newer.error.message).toMatch(/is 3, newer than the 2 this deployment reads/);
  });
});

/** Reads a stored version-1 record through `store`, writes it back, and answers what the store then holds. */
async function upgradeThrough(store: StateStore, orderId: string) {
  const read = await store.get(orderId);
  if (!read) throw new Error(`${orderId} not found`);
  expect(read.schemaVersion).toBe(STATE_SCHEMA_VERSION);
  expect(read.steps.map((s) => s.reference)).toEqual(
    (FIXTURES.processed.steps as { reference: string | null }[]).map((s) => s.reference),
  );
  const written = await store.replace(read, read._etag);
  expect(written.ok).toBe(true);
}

describe("a stored version-1 record", () => {
  it("on SQLite reads as version 2 and is written back as version 2, its protected references sealed", async () => {
    const db = openDatabase(":memory:");
    const orderId = String(FIXTURES.processed.orderId);
    db.prepare(
      `INSERT INTO state_records (order_id, etag, process_state, locked_by, complete_by, not_before, updated_at, document)
       VALUES (?, '"v1"', ?, NULL, NULL, ?, ?, ?)`,
    ).run(
      orderId,
      FIXTURES.processed.processState,
      FIXTURES.processed.notBefore,
      FIXTURES.processed.updatedAt,
      JSON.stringify(FIXTURES.processed),
    );
    await upgradeThrough(new ProtectedStateStore(new SqliteStateStore(db), cipher()), orderId);
    const row = db.prepare("SELECT document FROM state_records").pluck().get() as string;
    expect(JSON.parse(row).schemaVersion).toBe(2);
    expect(row).not.toMatch(/"pay-\d{6}"/);
    db.close();
  });

  describe("on Cosmos DB", () => {
    let server: CosmosStandIn;
    let containers: StateContainers;
    beforeAll(async () => {
      server = await startCosmosServer();
      containers = await ensureStateContainers(createCosmosClient(server.connection), "orders");
    });
    afterAll(async () => server.stop());

    it("reads as version 2 and is written back as version 2, its protected references sealed", async () => {
      const orderId = String(FIXTURES.processed.orderId);
      await containers.records.items.create({ id: orderId, ...FIXTURES.processed });
      await upgradeThrough(new ProtectedStateStore(new CosmosStateStore(containers), cipher()), orderId);
      const { resource } = await containers.records.item(orderId, orderId).read();
      expect(resource?.schemaVersion).toBe(2);
      expect(JSON.stringify(resource)).not.toMatch(/"pay-\d{6}"/);
    });
  });
});
