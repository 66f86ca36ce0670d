import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StateRecord, StoredStateRecord } from "../../src/domain/state-record.js";
import type { Command } from "../../src/domain/transition-commands.js";
import type { StateStore } from "../../src/ports/state-store.js";
import {
  InvalidContinuationTokenError,
  NotFoundError,
  PreconditionFailedError,
} from "../../src/ports/store-errors.js";
import { pendingRecord } from "../support/records.js";
import {
  at,
  claimCommand,
  createNew,
  type StateStoreFixture,
  transition,
  withoutEtag,
} from "./state-store-fixture.js";

/** The behaviour every StateStore adapter must show. */
export function describeStateStoreContract(
  adapterName: string,
  createFixture: () => Promise<StateStoreFixture>,
) {
  describe(`StateStore contract: ${adapterName}`, () => {
    let fixture: StateStoreFixture;
    let store: StateStore;

    beforeEach(async () => {
      fixture = await createFixture();
      store = fixture.store;
    });
    afterEach(async () => fixture.dispose());

    const create = (record: StateRecord) => createNew(store, record);

    describe("records", () => {
      it("creates a record once and returns the existing one, untouched, on a second create", async () => {
        const created = await create(pendingRecord("ord-a"));
        expect(created._etag).toEqual(expect.any(String));
        expect(withoutEtag(created)).toEqual(pendingRecord("ord-a"));
        const again = await store.createIfAbsent(pendingRecord("ord-a", { replyTo: "another-queue" }));
        expect(again).toEqual({ created: false, existing: created });
        expect(await store.get("ord-a")).toEqual(created);
      });

      it("returns undefined for an unknown order", async () => {
        expect(await store.get("ord-missing")).toBeUndefined();
      });

      it("has no tombstone for an order never retired (a removed one's is the RetentionStore suite's)", async () => {
        expect(await store.getRetired("ord-missing")).toBeUndefined();
        const created = await create(pendingRecord("ord-live"));
        const claimed = await store.replace(transition(created, claimCommand()), created._etag);
        expect(claimed.ok).toBe(true);
        expect(await store.getRetired("ord-live")).toBeUndefined();
      });

      it("replaces on a matching ETag, issuing a new one", async () => {
        const created = await create(pendingRecord("ord-a"));
        const claimed = transition(created, claimCommand());
        const replaced = await store.replace(claimed, created._etag);
        expect(replaced.ok).toBe(true);
        if (!replaced.ok) return;
        expect(replaced.value._etag).not.toBe(created._etag);
        expect(withoutEtag(replaced.value)).toEqual(withoutEtag({ ...claimed, _etag: "" }));
        expect(await store.get("ord-a")).toEqual(replaced.value);
      });

      it("fails a stale ETag with the typed precondition error and changes nothing", async () => {
        const created = await create(pendingRecord("ord-a"));
        const first = await store.replace(transition(created, claimCommand()), created._etag);
        expect(first.ok).toBe(true);
        const stored = await store.get("ord-a");
        const stale = await store.replace({ ...created, replyTo: "overwritten" }, created._etag);
        expect(stale.ok).toBe(false);
        if (stale.ok) return;
        expect(stale.error).toBeInstanceOf(PreconditionFailedError);
        expect(stale.error.kind).toBe("PreconditionFailed");
        expect(await store.get("ord-a")).toEqual(stored);
      });

      it("fails a replace of an unknown record with the typed not-found error", async () => {
        const result = await store.replace(pendingRecord("ord-ghost"), '"whatever"');
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.error).toBeInstanceOf(NotFoundError);
        expect(await store.get("ord-ghost")).toBeUndefined();
      });

      it("refuses to write a record that breaks the record schema", async () => {
        const broken = { ...pendingRecord("ord-bad"), processState: "Finished" } as unknown as StateRecord;
        await expect(store.createIfAbsent(broken)).rejects.toThrow(/processState/);
        expect(await store.get("ord-bad")).toBeUndefined();
      });

      it("lets exactly one of two concurrent claims of one record succeed", async () => {
        await create(pendingRecord("ord-race"));
        const other = fixture.secondHandle ? await fixture.secondHandle() : store;
        // Every claimant reads before any writes, so all four race on the same ETag.
        const handles = [store, other, store, other];
        const seen = await Promise.all(handles.map((handle) => handle.get("ord-race")));
        const results = await Promise.all(
          handles.map((handle, i) => {
            const record = seen[i];
            if (!record) throw new Error("record missing");
            return handle.replace(transition(record, claimCommand()), record._etag);
          }),
        );
        expect(results.filter((r) => r.ok)).toHaveLength(1);
        for (const lost of results.filter((r) => !r.ok)) {
          expect(!lost.ok && lost.error).toBeInstanceOf(PreconditionFailedError);
        }
        expect((await store.get("ord-race"))?.lockedBy).toBe("ord-race:1");
      });
    });

    it("counts the records in Processing", async () => {
      expect(await store.countProcessing()).toBe(0);
      for (let i = 0; i < 3; i++) {
        const created = await create(pendingRecord(`ord-${i}`));
        if (i < 2) await store.replace(transition(created, claimCommand()), created._etag);
      }
      expect(await store.countProcessing()).toBe(2);
    });

    describe("claimable query", () => {
      it("returns unlocked Pending and Compensating records whose notBefore has passed, oldest first", async () => {
        await create(pendingRecord("ord-late", { notBefore: at(3_000) }));
        await create(pendingRecord("ord-b", { notBefore: at(1_000) }));
        await create(pendingRecord("ord-a", { notBefore: at(1_000) }));
        await create(pendingRecord("ord-first", { notBefore: at(0) }));
        const processing = await create(pendingRecord("ord-busy"));
        await store.replace(transition(processing, claimCommand()), processing._etag);

        await create(pendingRecord("ord-undo", { processState: "Compensating", notBefore: at(500) }));
        await create(
          pendingRecord("ord-undoing", {
            processState: "Compensating",
            lockedBy: "ord-undoing:2",
            notBefore: at(0),
          }),
        );
        await create(pendingRecord("ord-failed", { processState: "Error", notBefore: at(0) }));

        const page = await store.queryClaimable({ now: at(2_000), maxItems: 10 });
        expect(page.items.map((r) => r.orderId)).toEqual(["ord-first", "ord-undo", "ord-a", "ord-b"]);
        expect(page.continuationToken).toBeNull();
        expect(page.cost.itemsReturned).toBe(4);
        expect(page.cost.requestUnits).toBeGreaterThanOrEqual(0);
        expect(page.items[0]?._etag).toEqual(expect.any(String));
      });

      it("pages every matching record exactly once while records change between pages", async () => {
        const ids = Array.from({ length: 25 }, (_, i) => `ord-${String(i).padStart(2, "0")}`);
        for (const [i, id] of ids.entries()) await create(pendingRecord(id, { notBefore: at(i % 5) }));
        for (let i = 0; i < 10; i++) {
          const busy = await create(pendingRecord(`busy-${i}`));
          await store.replace(transition(busy, claimCommand()), busy._etag);
        }
        const seen: string[] = [];
        let token: string | null = null;
        let pages = 0;
        do {
          const page = await store.queryClaimable({ now: at(10), maxItems: 4, continuationToken: token });
          expect(page.items.length).toBeLessThanOrEqual(4);
          seen.push(...page.items.map((r) => r.orderId));
          token = page.continuationToken;
          pages++;
          // Between pages: a matching record not yet returned gets a non-key update, a returned one and a
          // non-matching one change, and new non-matching records appear.
          const pendingLater = ids.find((id) => !seen.includes(id));
          for (const id of [pendingLater, seen[0], `busy-${pages % 10}`]) {
            if (!id) continue;
            const current = await store.get(id);
            if (current) await store.replace({ ...current, updatedAt: at(pages) }, current._etag);
          }
          await create(pendingRecord(`later-${pages}`, { notBefore: at(50) }));
        } while (token);
        expect(pages).toBe(7);
        expect([...seen].sort()).toEqual([...ids].sort());
        expect(new Set(seen).size).toBe(seen.length);
      });

      it("bounds page size and refuses foreign continuation tokens", async () => {
        for (let i = 0; i < 3; i++) await create(pendingRecord(`ord-${i}`));
        const first = await store.queryClaimable({ now: at(0), maxItems: 2 });
        expect(first.items).toHaveLength(2);
        expect(first.continuationToken).toEqual(expect.any(String));
        await expect(store.queryClaimable({ now: at(0), maxItems: 0 })).rejects.toThrow(RangeError);
        await expect(store.queryClaimable({ now: at(0), maxItems: 1_001 })).rejects.toThrow(RangeError);
        await expect(
          store.queryClaimable({ now: at(0), maxItems: 2, continuationToken: "not-a-token" }),
        ).rejects.toBeInstanceOf(InvalidContinuationTokenError);
        const expiredToken = first.continuationToken ?? "";
        await expect(
          store.queryExpired({
            now: at(0),
            maxItems: 2,
            continuationToken: expiredToken,
          }),
        ).rejects.toBeInstanceOf(InvalidContinuationTokenError);
      });
    });

    describe("expired query", () => {
      /** A record claimed at `claimedAt`, so its completeBy is 60 s later. */
      async function claimedAt(orderId: string, claimedAt: number): Promise<StoredStateRecord> {
        const created = await create(pendingRecord(orderId, { notBefore: at(Math.min(0, claimedAt)) }));
        const replaced = await store.replace(transition(created, claimCommand(at(claimedAt))), created._etag);
        if (!replaced.ok) throw replaced.error;
        return replaced.value;
      }

      it("returns Processing and Compensating records whose deadline has passed, however long ago, oldest first", async () => {
        await claimedAt("ord-old", -30 * 24 * 3_600_000); // deadline 30 days ago
        await claimedAt("ord-b", 20_000); // 80 s
        await claimedAt("ord-a", 10_000); // 70 s
        await claimedAt("ord-now", 40_000); // 100 s: equal to now counts as passed
        await claimedAt("ord-future", 50_000); // 110 s
        await create(pendingRecord("ord-pending"));
        const page = await store.queryExpired({ now: at(100_000), maxItems: 10 });
        expect(page.items.map((r) => r.orderId)).toEqual(["ord-old", "ord-a", "ord-b", "ord-now"]);
        expect(page.continuationToken).toBeNull();
        expect(page.cost.itemsReturned).toBe(4);
      });

      it("finds a record expired 30 days ago among many that do not match, without reading them", async () => {
        for (let i = 0; i < 60; i++) {
          await create(pendingRecord(`done-${i}`, { processState: i % 4 === 0 ? "Error" : "Processed" }));
        }
        for (let i = 0; i < 20; i++) await create(pendingRecord(`waiting-${i}`));
        for (let i = 0; i < 10; i++) await claimedAt(`running-${i}`, 1_000_000);
        await claimedAt("ord-old", -30 * 24 * 3_600_000);
        // Measured after a store's first scan, which may do one-off upkeep (Cosmos DB: its index audit).
        await store.queryExpired({ now: at(-31 * 24 * 3_600_000), maxItems: 1 });
        const page = await store.queryExpired({ now: at(0), maxItems: 10 });
        expect(page.items.map((r) => r.orderId)).toEqual(["ord-old"]);
        expect(page.continuationToken).toBeNull();
        // The record, and at most an index entry for it: nothing of the 90 records that do not match.
        expect(page.cost.documentsRead).toBeGreaterThanOrEqual(1);
        expect(page.cost.documentsRead).toBeLessThanOrEqual(2);
      });

      it("finds a record by its deadline when a write moves the deadline earlier or later", async () => {
        const earlier = await claimedAt("ord-earlier", 0); // deadline 60 s
        const later = await claimedAt("ord-later", 0); // deadline 60 s
        const moved = async (record: StoredStateRecord, completeBy: string) => {
          const written = await store.replace({ ...record, completeBy }, record._etag);
          if (!written.ok) throw written.error;
        };
        await moved(earlier, at(20_000));
        await moved(later, at(90_000));
        const ids = async (now: number) =>
          (await store.queryExpired({ now: at(now), maxItems: 10 })).items.map((r) => r.orderId);
        expect(await ids(19_999)).toEqual([]);
        expect(await ids(20_000)).toEqual(["ord-earlier"]);
        expect(await ids(89_999)).toEqual(["ord-earlier"]);
        expect(await ids(90_000)).toEqual(["ord-earlier", "ord-later"]);
      });

      it("pages many expired records oldest deadline first, ties by orderId, each once", async () => {
        const expected: { orderId: string; completeBy: string }[] = [];
        for (let i = 0; i < 40; i++) {
          const record = await claimedAt(`ord-${String((i * 7) % 40).padStart(2, "0")}`, (i % 6) * 1_000);
          expected.push({ orderId: record.orderId, completeBy: record.completeBy ?? "" });
          if (i % 8 === 0) await create(pendingRecord(`done-${i}`, { processState: "Processed" }));
        }
        await claimedAt("fresh", 500_000);
        expected.sort((a, b) =>
          a.completeBy === b.completeBy
            ? a.orderId.localeCompare(b.orderId)
            : a.completeBy.localeCompare(b.completeBy),
        );
        const seen: string[] = [];
        let token: string | null = null;
        let pages = 0;
        do {
          const page = await store.queryExpired({ now: at(100_000), maxItems: 6, continuationToken: token });
          expect(page.items.length).toBeLessThanOrEqual(6);
          seen.push(...page.items.map((r) => r.orderId));
          token = page.continuationToken;
          pages++;
        } while (token);
        expect(seen).toEqual(expected.map((e) => e.orderId));
        expect(pages).toBe(7);
      });

      it("pages every expired record exactly once while other records are recovered between pages", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 18; i++) {
          ids.push(`ord-${String(i).padStart(2, "0")}`);
          await claimedAt(ids[i] as string, (i % 6) * 1_000);
        }
        for (let i = 0; i < 6; i++) await claimedAt(`fresh-${i}`, 500_000);
        const seen: string[] = [];
        let token: string | null = null;
        do {
          const page = await store.queryExpired({
            now: at(200_000),
            maxItems: 5,
            continuationToken: token,
          });
          seen.push(...page.items.map((r) => r.orderId));
          token = page.continuationToken;
          // The Supervisor recovers what it saw (it stops matching) and a fresh record is touched.
          for (const record of page.items.slice(0, 2)) {
            const recover: Command = {
              type: "recover",
              expectedLockedBy: record.lockedBy ?? "",
              now: at(200_000),
              policy: {
                maxRecoveries: 5,
                backoff: { baseMs: 10, capMs: 10 },
                extendedBackoffAfter: 5,
                extendedDelayMs: 10,
                onExhausted: "error",
              },
              random: () => 0,
            };
            const recovered = await store.replace(transition(record, recover, "supervisor"), record._etag);
            expect(recovered.ok).toBe(true);
          }
          const fresh = await store.get("fresh-0");
          if (fresh) await store.replace({ ...fresh, updatedAt: at(seen.length) }, fresh._etag);
        } while (token);
        expect([...seen].sort()).toEqual([...ids].sort());
        expect(new Set(seen).size).toBe(seen.length);
      });
    });
  });
}
