import { afterEach, describe, expect, it } from "vitest";
import { auditedWrites, enableStateAudit } from "../../../laptop/simulation/oracles/state-audit.js";
import { SqliteStateStore } from "../../../laptop/sqlite/sqlite-state-store.js";
import { type EmbeddedDatabase, openDatabase } from "../../../src/adapters/sqlite/database.js";
import { pendingRecord } from "../../support/records.js";

const databases: EmbeddedDatabase[] = [];

afterEach(() => {
  for (const db of databases.splice(0)) db.close();
});

function audited(): { db: EmbeddedDatabase; store: SqliteStateStore } {
  const db = openDatabase(":memory:");
  databases.push(db);
  enableStateAudit(db);
  return { db, store: new SqliteStateStore(db) };
}

describe("the state audit", () => {
  it("keeps every write with what it replaced, and nothing for a write that was refused", async () => {
    const { db, store } = audited();
    const created = await store.createIfAbsent(pendingRecord("ord-1"));
    if (!created.created) throw new Error("not created");
    const claimed = await store.replace(
      {
        ...created.record,
        processState: "Processing",
        lockedBy: "ord-1:1",
        completeBy: "2026-01-01T00:05:00.000Z",
        attempt: 1,
        updatedAt: "2026-01-01T00:00:01.000Z",
      },
      created.record._etag,
    );
    if (!claimed.ok) throw claimed.error;
    const stale = await store.replace({ ...created.record, failureCount: 9 }, created.record._etag);
    expect(stale.ok).toBe(false);
    const failed = await store.replace(
      {
        ...claimed.value,
        processState: "Pending",
        lockedBy: null,
        completeBy: null,
        failureCount: 1,
        lastError: {
          kind: "transient",
          code: "StartFailed",
          message: "the durable client did not answer",
          step: null,
          at: "2026-01-01T00:00:02.000Z",
        },
        updatedAt: "2026-01-01T00:00:02.000Z",
      },
      claimed.value._etag,
    );
    if (!failed.ok) throw failed.error;

    const writes = auditedWrites(db);
    expect(writes.map((w) => [w.before?.processState ?? null, w.after.processState])).toEqual([
      [null, "Pending"],
      ["Pending", "Processing"],
      ["Processing", "Pending"],
    ]);
    expect(writes[1]?.before).toEqual(writes[0]?.after);
    expect(writes[2]?.before).toEqual(writes[1]?.after);
    expect(writes[2]?.after).toEqual({
      orderId: "ord-1",
      processState: "Pending",
      lockedBy: null,
      completeBy: null,
      failureCount: 1,
      updatedAt: "2026-01-01T00:00:02.000Z",
      lastErrorCode: "StartFailed",
    });
  });

  it("chains each order's writes on their own, however they interleave", async () => {
    const { db, store } = audited();
    const a = await store.createIfAbsent(pendingRecord("ord-a"));
    const b = await store.createIfAbsent(pendingRecord("ord-b"));
    if (!a.created || !b.created) throw new Error("not created");
    await store.replace({ ...a.record, failureCount: 1 }, a.record._etag);
    const writes = auditedWrites(db);
    expect(writes.map((w) => [w.orderId, w.before?.failureCount ?? null, w.after.failureCount])).toEqual([
      ["ord-a", null, 0],
      ["ord-b", null, 0],
      ["ord-a", 0, 1],
    ]);
  });

  it("tells a create from an update: a record created again after it was deleted replaced nothing", async () => {
    const { db, store } = audited();
    const first = await store.createIfAbsent(pendingRecord("ord-1"));
    if (!first.created) throw new Error("not created");
    db.prepare("DELETE FROM state_records WHERE order_id = ?").run("ord-1");
    await store.createIfAbsent(pendingRecord("ord-1", { failureCount: 2 }));
    const writes = auditedWrites(db);
    expect(writes.map((w) => [w.before, w.after.failureCount])).toEqual([
      [null, 0],
      [null, 2],
    ]);
  });

  it("reads a row that kept what it replaced itself, as audits before this one did", () => {
    const { db } = audited();
    const state = (failureCount: number) =>
      JSON.stringify({
        orderId: "ord-1",
        processState: "Pending",
        lockedBy: null,
        completeBy: null,
        failureCount,
        updatedAt: "2026-01-01T00:00:00.000Z",
        lastErrorCode: null,
      });
    db.prepare("INSERT INTO state_audit (order_id, before, after) VALUES (?, ?, ?)").run(
      "ord-1",
      state(5),
      state(6),
    );
    expect(auditedWrites(db)[0]?.before?.failureCount).toBe(5);
  });
});
