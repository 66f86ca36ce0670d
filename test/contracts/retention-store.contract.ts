import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROCESS_STATES, type StateRecord } from "../../src/domain/state-record.js";
import type { RetentionStore } from "../../src/ports/retention-store.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { pendingRecord } from "../support/records.js";
import { at, createNew, type StateStoreFixture, withoutEtag } from "./state-store-fixture.js";

/** The behaviour every RetentionStore adapter must show. */
export function describeRetentionStoreContract(
  adapterName: string,
  createFixture: () => Promise<StateStoreFixture<StateStore & RetentionStore>>,
) {
  describe(`RetentionStore contract: ${adapterName}`, () => {
    let fixture: StateStoreFixture<StateStore & RetentionStore>;
    let store: StateStore & RetentionStore;

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
  });
}
