import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { AesGcmFieldCipher } from "../../src/adapters/crypto/aes-gcm-field-cipher.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import type { StateRecord } from "../../src/domain/state-record.js";
import { type KeyRing, SealedValueError } from "../../src/ports/field-cipher.js";
import { ProtectedStateStore } from "../../src/state/protected-state-store.js";
import { describeRetentionStoreContract } from "../contracts/retention-store.contract.js";
import { describeStateReadModelContract } from "../contracts/state-read-model.contract.js";
import { describeStateStoreContract } from "../contracts/state-store.contract.js";
import type { StateStoreFixture } from "../contracts/state-store-fixture.js";
import { pendingRecord, T0 } from "../support/records.js";

function ring(...ids: string[]): KeyRing {
  const keys = ids.map((id) => ({ id, key: randomBytes(32) }));
  const [current] = keys;
  if (!current) throw new Error("a ring needs a key");
  return { current, keys };
}

async function protectedInMemory(): Promise<StateStoreFixture<ProtectedStateStore>> {
  const db = openDatabase(":memory:");
  const store = new ProtectedStateStore(new SqliteStateStore(db), new AesGcmFieldCipher(ring("k1")));
  return { store, dispose: async () => void db.close() };
}

const SEALED = "SQLite in memory, protected fields sealed";
describeStateStoreContract(SEALED, protectedInMemory);
describeStateReadModelContract(SEALED, protectedInMemory);
describeRetentionStoreContract(SEALED, protectedInMemory);

/** A record with every step applied and logged: the partner's references for all its steps. */
function appliedRecord(orderId: string): StateRecord {
  const base = pendingRecord(orderId);
  const references = {
    reserveInventory: "res-000042",
    chargePayment: "pay-000042",
    arrangeShipment: "shp-000042",
    notifyCustomer: "ntf-000042",
  };
  return {
    ...base,
    steps: base.steps.map((step) => ({ ...step, status: "Completed", reference: references[step.name] })),
    compensationLog: base.steps.map((step, index) => ({
      sequence: index + 1,
      step: step.name,
      idempotencyKey: `${orderId}:${step.name}`,
      reference: references[step.name],
      recordedAt: T0,
    })),
  };
}

function rawRows(db: ReturnType<typeof openDatabase>): string {
  return JSON.stringify(db.prepare("SELECT * FROM state_records").all());
}

describe("ProtectedStateStore", () => {
  it("keeps payment and personal references out of the stored rows, and gives them back in clear", async () => {
    const db = openDatabase(":memory:");
    const store = new ProtectedStateStore(new SqliteStateStore(db), new AesGcmFieldCipher(ring("k1")));
    const created = await store.createIfAbsent(appliedRecord("ord-1"));
    expect(created.created && created.record.steps.map((s) => s.reference)).toEqual([
      "res-000042",
      "pay-000042",
      "shp-000042",
      "ntf-000042",
    ]);
    const raw = rawRows(db);
    expect(raw).not.toContain("pay-000042");
    expect(raw).not.toContain("shp-000042");
    expect(raw).not.toContain("ntf-000042");
    // Inventory reservations name no person and no payment: kept in clear, as classified.
    expect(raw).toContain("res-000042");
    expect(raw).toMatch(/enc1\.k1\./);
    expect((await store.get("ord-1"))?.compensationLog.map((e) => e.reference)).toEqual([
      "res-000042",
      "pay-000042",
      "shp-000042",
      "ntf-000042",
    ]);
    db.close();
  });

  it("opens records sealed under an older key once a new key is current, and seals new writes with it", async () => {
    const db = openDatabase(":memory:");
    const old = ring("k1");
    const before = new ProtectedStateStore(new SqliteStateStore(db), new AesGcmFieldCipher(old));
    await before.createIfAbsent(appliedRecord("ord-1"));
    const [oldKey] = old.keys;
    if (!oldKey) throw new Error("no key");
    const rotatedKey = { id: "k2", key: randomBytes(32) };
    const after = new ProtectedStateStore(
      new SqliteStateStore(db),
      new AesGcmFieldCipher({ current: rotatedKey, keys: [rotatedKey, oldKey] }),
    );
    const read = await after.get("ord-1");
    expect(read?.steps[1]?.reference).toBe("pay-000042");
    if (!read) throw new Error("no record");
    const replaced = await after.replace({ ...read, attempt: read.attempt + 1 }, read._etag);
    expect(replaced.ok).toBe(true);
    // Rewritten under the new key: what only the old key sealed is gone from the row.
    expect(rawRows(db)).toMatch(/enc1\.k2\./);
    expect(rawRows(db)).not.toMatch(/enc1\.k1\./);
    // A ring without the key a value was sealed under cannot read it, and says so.
    const lost = new ProtectedStateStore(new SqliteStateStore(db), new AesGcmFieldCipher(ring("k3")));
    await expect(lost.get("ord-1")).rejects.toThrow(/no key k2 in the ring/);
    db.close();
  });

  it("reads a record stored in clear before protection began, and seals it when it is next written", async () => {
    const db = openDatabase(":memory:");
    await new SqliteStateStore(db).createIfAbsent(appliedRecord("ord-1"));
    const store = new ProtectedStateStore(new SqliteStateStore(db), new AesGcmFieldCipher(ring("k1")));
    const read = await store.get("ord-1");
    expect(read?.steps[1]?.reference).toBe("pay-000042");
    if (!read) throw new Error("no record");
    await store.replace(read, read._etag);
    expect(rawRows(db)).not.toContain("pay-000042");
    db.close();
  });
});

describe("AesGcmFieldCipher", () => {
  const cipherRing = ring("k1");
  const cipher = new AesGcmFieldCipher(cipherRing);

  it("seals with a fresh IV, keeps the ciphertext of an unchanged value, and opens it only in its own context", () => {
    const a = cipher.seal("pay-1", "ord-1/chargePayment/reference");
    expect(cipher.seal("pay-1", "ord-1/chargePayment/reference")).toBe(a);
    expect(new AesGcmFieldCipher(ring("k1")).seal("pay-1", "ord-1/chargePayment/reference")).not.toBe(a);
    const other = cipher.seal("pay-1", "ord-2/chargePayment/reference");
    expect(other).not.toBe(a);
    expect(cipher.open(a, "ord-1/chargePayment/reference")).toBe("pay-1");
    expect(() => cipher.open(a, "ord-2/chargePayment/reference")).toThrow(SealedValueError);
    // Opened by a process that never sealed it, as after a restart.
    const fresh = new AesGcmFieldCipher({ current: cipherRing.current, keys: cipherRing.keys });
    expect(fresh.open(a, "ord-1/chargePayment/reference")).toBe("pay-1");
    expect(() => fresh.open(a, "ord-3/chargePayment/reference")).toThrow(SealedValueError);
  });

  it("never gives two values the same IV, across many refills of its random pool", () => {
    const fresh = new AesGcmFieldCipher(cipherRing);
    const contexts = Array.from({ length: 2_000 }, (_, i) => `ord-${i}/chargePayment/reference`);
    const sealed = contexts.map((context) => fresh.seal("pay-1", context));
    const ivs = sealed.map((value) =>
      Buffer.from(value.split(".")[2] ?? "", "base64url")
        .subarray(0, 12)
        .toString("hex"),
    );
    expect(new Set(ivs).size).toBe(sealed.length);
    const reader = new AesGcmFieldCipher(cipherRing);
    expect(sealed.map((value, i) => reader.open(value, contexts[i] ?? ""))).toEqual(
      contexts.map(() => "pay-1"),
    );
  });

  it("refuses a value altered in storage, and returns a clear one as it is", () => {
    const sealed = cipher.seal("pay-1", "c");
    // The next to last character changed (every one of its six bits is data; the last may hold padding).
    const replaced = sealed.at(-2) === "A" ? "B" : "A";
    const altered = `${sealed.slice(0, -2)}${replaced}${sealed.slice(-1)}`;
    expect(() => cipher.open(altered, "c")).toThrow(/altered/);
    expect(() => cipher.open("enc1.k1.AAAA", "c")).toThrow(/truncated/);
    expect(cipher.open("pay-1", "c")).toBe("pay-1");
  });

  it("keeps the longest reference the partner may send within the record's limit", () => {
    const longest = cipher.seal("r".repeat(256), "ord-1/chargePayment/reference");
    expect(longest.length).toBeLessThanOrEqual(417);
  });
});
