import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { type CosmosStandIn, startCosmosServer } from "../../laptop/stand-ins/cosmos-server.js";
import {
  createCosmosClient,
  ensureStateContainers,
  type StateContainers,
} from "../../src/adapters/cosmos/cosmos-client.js";
import { CosmosStateStore } from "../../src/adapters/cosmos/cosmos-state-store.js";
import { AesGcmFieldCipher } from "../../src/adapters/crypto/aes-gcm-field-cipher.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { MIGRATIONS } from "../../src/adapters/sqlite/migrations.js";
import { STATE_SCHEMA_VERSION } from "../../src/domain/state-record.js";
import { parseStateRecord } from "../../src/domain/state-record-check.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { ProtectedStateStore } from "../../src/state/protected-state-store.js";

/** Records as version 1 of the app stored them, captured from a `sas demo` run: every reference in clear. */
const FIXTURES = JSON.parse(
  readFileSync(join(import.meta.dirname, "../fixtures/state-records-v1.json"), "utf8"),
) as { processed: Record<string, unknown>; compensated: Record<string, unknown> };
const V1 = [FIXTURES.processed, FIXTURES.compensated];

/** Records as version 2 stored them (a scenario on the embedded host): one Processed, one Pending after deferrals. */
const V2 = JSON.parse(
  readFileSync(join(import.meta.dirname, "../fixtures/state-records-v2.json"), "utf8"),
) as { processed: Record<string, unknown>; deferred: Record<string, unknown> };

/** The latest `updatedAt` of a record's steps that completed or were undone, or its creation. */
function progressOf(record: Record<string, unknown>): string {
  const steps = record.steps as { status: string; updatedAt: string | null }[];
  const times = steps
    .filter((s) => s.status === "Completed" || s.status === "Compensated")
    .map((s) => s.updatedAt ?? "");
  return [String(record.createdAt), ...times].sort().at(-1) ?? "";
}

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
      // A field added since with a default (none of its host's interruptions spared yet) reads as that
      // default; version 3's as its upgrade derives them (below).
      expect(parsed.ok && parsed.value).toEqual({
        ...v1,
        schemaVersion: STATE_SCHEMA_VERSION,
        hostInterruptions: 0,
        deferredSince: null,
        progressAt: progressOf(v1),
      });
    }
    // The demo's orders completed their steps after they were accepted: their progress is the last one's.
    expect(progressOf(FIXTURES.processed) > String(FIXTURES.processed.createdAt)).toBe(true);
  });

  it("refuse a version no upgrade reaches and one from a later release, saying which", () => {
    const older = parseStateRecord({ ...FIXTURES.processed, schemaVersion: 0 });
    expect(!older.ok && older.error.message).toMatch(
      /schemaVersion: is 0, older than the 3 this deployment reads/,
    );
    const newer = parseStateRecord({ ...FIXTURES.processed, schemaVersion: 4 });
    expect(!newer.ok && newer.error.message).toMatch(/is 4, newer than the 3 this deployment reads/);
  });
});

describe("F24-4: state records of version 2", () => {
  it("are version 2, one of them Pending after deferrals for an open circuit breaker", () => {
    expect([V2.processed.schemaVersion, V2.deferred.schemaVersion]).toEqual([2, 2]);
    expect(V2.deferred).toMatchObject({ processState: "Pending", lastError: { code: "PartnerUnavailable" } });
  });

  it("read as version 3: progress from their steps, and a waiting deferral's run counted from its last deferral", () => {
    const processed = parseStateRecord(V2.processed);
    expect(processed.ok && processed.value).toEqual({
      ...V2.processed,
      schemaVersion: 3,
      deferredSince: null,
      progressAt: progressOf(V2.processed),
    });
    const deferred = parseStateRecord(V2.deferred);
    const lastDeferral = (V2.deferred.lastError as { at: string }).at;
    expect(deferred.ok && deferred.value).toEqual({
      ...V2.deferred,
      schemaVersion: 3,
      // Never earlier than its first deferral: the upgrade cannot bring its limit forward.
      deferredSince: lastDeferral,
      progressAt: V2.deferred.createdAt,
    });
  });

  it("on SQLite: the migration gives a stored version-2 row its progress, and the longest waiting Pending is found", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "sas-upgrade-")), "state.db");
    const before = openDatabase(file, { migrations: MIGRATIONS.filter((m) => m.version <= 11) });
    const insert = before.prepare(
      `INSERT INTO state_records (order_id, etag, process_state, locked_by, complete_by, not_before, updated_at, document)
       VALUES (?, '"v2"', ?, NULL, NULL, ?, ?, ?)`,
    );
    for (const record of [V2.processed, V2.deferred]) {
      insert.run(
        record.orderId,
        record.processState,
        record.notBefore,
        record.updatedAt,
        JSON.stringify(record),
      );
    }
    before.close();
    const db = openDatabase(file);
    try {
      const store = new SqliteStateStore(db);
      expect(await store.oldestPending()).toEqual({
        orderId: V2.deferred.orderId,
        progressAt: V2.deferred.createdAt,
      });
      const read = await store.get(String(V2.deferred.orderId));
      expect(read).toMatchObject({ schemaVersion: 3, progressAt: V2.deferred.createdAt });
    } finally {
      db.close();
    }
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
  it("on SQLite reads as the current version and is written back so, its protected references sealed", async () => {
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
    expect(JSON.parse(row).schemaVersion).toBe(STATE_SCHEMA_VERSION);
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

    it("reads as the current version and is written back so, its protected references sealed", async () => {
      const orderId = String(FIXTURES.processed.orderId);
      await containers.records.items.create({ id: orderId, ...FIXTURES.processed });
      await upgradeThrough(new ProtectedStateStore(new CosmosStateStore(containers), cipher()), orderId);
      const { resource } = await containers.records.item(orderId, orderId).read();
      expect(resource?.schemaVersion).toBe(STATE_SCHEMA_VERSION);
      expect(JSON.stringify(resource)).not.toMatch(/"pay-\d{6}"/);
    });
  });
});
