import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROCESS_STATES, type StateRecord } from "../../src/domain/state-record.js";
import type { RetentionStore } from "../../src/ports/retention-store.js";
import type { StateReadModel } from "../../src/ports/state-read-model.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { pendingRecord } from "../support/records.js";
import { at, createNew, type StateStoreFixture, withoutEtag } from "./state-store-fixture.js";

/** The store's ports a retention suite exercises: it checks that a tombstone is in no read of records. */
type Store = StateStore & StateReadModel & RetentionStore;

/** The behaviour every RetentionStore adapter must show. */
export function describeRetentionStoreContract(
  adapterName: string,
  createFixture: () => Promise<StateStoreFixture<Store>>,
) {
  describe(`RetentionStore contract: ${adapterName}`, () => {
    let fixture: StateStoreFixture<Store>;
    let store: Store;

    beforeEach(async () => {
      fixture = await createFixture();
      store = fixture.store;
    });
    afterEach(async () => fixture.dispose());

    const create = (record: StateRecord) => createNew(store, record);

    it("answers Processed and Compensated records changed before the cutoff, and no others", async () => {
      for (const processState of PROCESS_STATES) {
        await create(pendingRecord(`old-${processState}`, { processState, attempt: 3, updatedAt: at(-1) }));
      }
      await create(pendingRecord("edge-Processed", { processState: "Processed", updatedAt: at(0) }));
      const retired = await store.queryRetired({ before: at(0), maxItems: 10 });
      expect([...retired].sort((a, b) => a.orderId.localeCompare(b.orderId))).toEqual([
        { orderId: "old-Compensated", attempt: 3, updatedAt: at(-1), etag: expect.any(String) },
        { orderId: "old-Processed", attempt: 3, updatedAt: at(-1), etag: expect.any(String) },
      ]);
      const processed = await store.get("old-Processed");
      expect(retired.find((r) => r.orderId === "old-Processed")?.etag).toBe(processed?._etag);
      expect(await store.queryRetired({ before: at(-1), maxItems: 10 })).toEqual([]);
    });

    it("answers at most maxItems, and the next batch once those are removed", async () => {
      for (let i = 0; i < 5; i++) {
        await create(pendingRecord(`ord-${i}`, { processState: "Processed", updatedAt: at(-i - 1) }));
      }
      const seen = new Set<string>();
      for (let batch = 0; batch < 3; batch++) {
        const retired = await store.queryRetired({ before: at(0), maxItems: 2 });
        expect(retired.length).toBe(batch < 2 ? 2 : 1);
        for (const record of retired) {
          expect(seen.has(record.orderId)).toBe(false);
          seen.add(record.orderId);
          expect(await store.remove(record.orderId, record.etag)).toBe(true);
        }
      }
      expect(seen.size).toBe(5);
      expect(await store.queryRetired({ before: at(0), maxItems: 2 })).toEqual([]);
      await expect(store.queryRetired({ before: at(0), maxItems: 0 })).rejects.toThrow(RangeError);
    });

    it("removes a record only while it has the ETag read, and reports a record already gone", async () => {
      const record = await create(pendingRecord("ord-r", { processState: "Processed", updatedAt: at(-1) }));
      const replaced = await store.replace(withoutEtag(record), record._etag);
      if (!replaced.ok) throw replaced.error;
      expect(await store.remove("ord-r", record._etag)).toBe(false);
      expect(await store.get("ord-r")).toBeDefined();
      expect(await store.remove("ord-r", replaced.value._etag)).toBe(true);
      expect(await store.get("ord-r")).toBeUndefined();
      expect(await store.remove("ord-r", replaced.value._etag)).toBe(false);
      // The order may be submitted again: its key is free.
      expect((await store.createIfAbsent(pendingRecord("ord-r"))).created).toBe(true);
    });

    describe("tombstones", () => {
      it("keeps a tombstone of each order it removes: its final state, attempt, last change, the delete's time and its replyTo", async () => {
        for (const [processState, replyTo] of [
          ["Processed", "status-app"],
          ["Compensated", null],
        ] as const) {
          const orderId = `gone-${processState}`;
          const record = await create(
            pendingRecord(orderId, { processState, attempt: 3, updatedAt: at(-1), replyTo }),
          );
          expect(await store.remove(orderId, record._etag, at(5_000))).toBe(true);
          expect(await store.get(orderId)).toBeUndefined();
          expect(await store.getRetired(orderId)).toEqual({
            orderId,
            finalState: processState,
            attempt: 3,
            retiredAt: at(-1),
            purgedAt: at(5_000),
            // F24-8: what a resend must name again to be answered.
            replyTo,
          });
        }
      });

      it("has none for an order it never removed: unknown, live, or whose remove lost to a change", async () => {
        expect(await store.getRetired("ord-unknown")).toBeUndefined();
        for (const processState of ["Pending", "Processing", "Error", "CompensationFailed"] as const) {
          await create(pendingRecord(`live-${processState}`, { processState }));
          expect(await store.getRetired(`live-${processState}`)).toBeUndefined();
        }
        const read = await create(pendingRecord("ord-changed", { processState: "Error" }));
        const changed = await store.replace(withoutEtag(read), read._etag);
        if (!changed.ok) throw changed.error;
        expect(await store.remove("ord-changed", read._etag, at(1))).toBe(false);
        expect(await store.getRetired("ord-changed")).toBeUndefined();
        expect(await store.get("ord-changed")).toEqual(changed.value);
      });

      it("never shows a tombstone in a read of records: gets, queries, counts, lists and retention's batch", async () => {
        for (const processState of PROCESS_STATES) {
          await create(
            pendingRecord(`live-${processState}`, {
              processState,
              updatedAt: at(-10),
              ...(processState === "Processing" || processState === "Compensating"
                ? { lockedBy: `live-${processState}:1`, completeBy: at(-5) }
                : {}),
            }),
          );
        }
        for (const processState of ["Processed", "Compensated"] as const) {
          const gone = await create(
            pendingRecord(`gone-${processState}`, { processState, updatedAt: at(-20) }),
          );
          expect(await store.remove(gone.orderId, gone._etag, at(0))).toBe(true);
        }
        const live = PROCESS_STATES.map((state) => `live-${state}`).sort();
        const ids = (records: readonly { orderId: string }[]) => records.map((r) => r.orderId).sort();

        expect(await store.get("gone-Processed")).toBeUndefined();
        expect(ids((await store.listRecent({ state: null, maxItems: 50 })).items)).toEqual(live);
        for (const state of PROCESS_STATES) {
          expect(ids((await store.listRecent({ state, maxItems: 50 })).items)).toEqual([`live-${state}`]);
          expect(await store.countInState(state)).toBe(1);
        }
        expect(await store.oldestPending()).toMatchObject({ orderId: "live-Pending" });
        expect(await store.countByState()).toEqual(
          Object.fromEntries(PROCESS_STATES.map((state) => [state, 1])),
        );
        expect(await store.countFinishedBetween(at(-100), at(100))).toBe(4);
        const versions = await store.countByWorkflowVersion(PROCESS_STATES);
        expect(versions.reduce((sum, entry) => sum + entry.count, 0)).toBe(PROCESS_STATES.length);
        expect(await store.countProcessing()).toBe(1);
        expect(ids((await store.queryClaimable({ now: at(0), maxItems: 50 })).items)).toEqual([
          "live-Pending",
        ]);
        expect(ids((await store.queryExpired({ now: at(0), maxItems: 50 })).items)).toEqual([
          "live-Compensating",
          "live-Processing",
        ]);
        expect(ids(await store.queryRetired({ before: at(100), maxItems: 50 }))).toEqual([
          "live-Compensated",
          "live-Processed",
        ]);
      });
    });
  });
}
