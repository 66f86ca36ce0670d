import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StateRecord } from "../../src/domain/state-record.js";
import type { StateReadModel } from "../../src/ports/state-read-model.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { InvalidContinuationTokenError } from "../../src/ports/store-errors.js";
import { pendingRecord } from "../support/records.js";
import {
  at,
  claimCommand,
  createNew,
  type StateStoreFixture,
  transition,
  withoutEtag,
} from "./state-store-fixture.js";

/** The behaviour every StateReadModel adapter must show. */
export function describeStateReadModelContract(
  adapterName: string,
  createFixture: () => Promise<StateStoreFixture<StateStore & StateReadModel>>,
) {
  describe(`StateReadModel contract: ${adapterName}`, () => {
    let fixture: StateStoreFixture<StateStore & StateReadModel>;
    let store: StateStore & StateReadModel;

    beforeEach(async () => {
      fixture = await createFixture();
      store = fixture.store;
    });
    afterEach(async () => fixture.dispose());

    const create = (record: StateRecord) => createNew(store, record);

    it("counts the records in each state, every state present", async () => {
      await create(pendingRecord("ord-c1"));
      await create(pendingRecord("ord-c2"));
      await create({ ...pendingRecord("ord-c3"), processState: "Error" });
      expect(await store.countByState()).toEqual({
        Pending: 2,
        Processing: 0,
        Processed: 0,
        Error: 1,
        Compensating: 0,
        Compensated: 0,
        CompensationFailed: 0,
      });
      expect(await store.countInState("Pending")).toBe(2);
      expect(await store.countInState("Compensated")).toBe(0);
    });

    it("counts the records of the states asked for per workflow version, leaving out pairs with none", async () => {
      await create(pendingRecord("ord-v1a", { workflowVersion: 1 }));
      await create(pendingRecord("ord-v1b", { workflowVersion: 1, processState: "Error" }));
      await create(pendingRecord("ord-v1c", { workflowVersion: 1, processState: "Processed" }));
      await create(pendingRecord("ord-v2a", { workflowVersion: 2 }));
      await create(pendingRecord("ord-v2b", { workflowVersion: 2 }));
      const counts = await store.countByWorkflowVersion(["Pending", "Error", "CompensationFailed"]);
      const sorted = [...counts].sort(
        (a, b) => a.workflowVersion - b.workflowVersion || a.processState.localeCompare(b.processState),
      );
      expect(sorted).toEqual([
        { workflowVersion: 1, processState: "Error", count: 1 },
        { workflowVersion: 1, processState: "Pending", count: 1 },
        { workflowVersion: 2, processState: "Pending", count: 2 },
      ]);
      expect(await store.countByWorkflowVersion([])).toEqual([]);
    });

    describe("statistics", () => {
      it("F24-4: finds the Pending record waiting longest by its progress, not its last change; null with none", async () => {
        // Changed a moment ago (a deferral, a recovery), but no progress for 90 s: the longest wait.
        await create(pendingRecord("ord-old", { progressAt: at(-90_000), updatedAt: at(-1) }));
        await create(pendingRecord("ord-new", { progressAt: at(5_000), updatedAt: at(5_000) }));
        await create(pendingRecord("ord-mid", { progressAt: at(-1_000), updatedAt: at(-80_000) }));
        // Waiting longer, but not Pending.
        await create(pendingRecord("ord-done", { processState: "Processed", progressAt: at(-500_000) }));
        expect(await store.oldestPending()).toEqual({ orderId: "ord-old", progressAt: at(-90_000) });
      });

      it("answers null when no record is Pending", async () => {
        await create(pendingRecord("ord-err", { processState: "Error", progressAt: at(-500_000) }));
        expect(await store.oldestPending()).toBeNull();
      });

      it("follows a record out of Pending: the next longest waiting takes its place", async () => {
        const old = await create(pendingRecord("ord-old", { progressAt: at(-60_000) }));
        await create(pendingRecord("ord-next", { progressAt: at(-30_000) }));
        const claimed = await store.replace(transition(old, claimCommand()), old._etag);
        expect(claimed.ok).toBe(true);
        expect(await store.oldestPending()).toEqual({ orderId: "ord-next", progressAt: at(-30_000) });
      });

      it("counts the records in a terminal state whose last change falls in [from, to)", async () => {
        const finished = ["Processed", "Error", "Compensated", "CompensationFailed"] as const;
        for (const [i, processState] of finished.entries()) {
          await create(pendingRecord(`ord-f${i}`, { processState, updatedAt: at(i * 10_000) }));
        }
        await create(pendingRecord("ord-edge", { processState: "Processed", updatedAt: at(60_000) }));
        await create(pendingRecord("ord-before", { processState: "Processed", updatedAt: at(-1) }));
        // Changed in the window, but not finished.
        for (const processState of ["Pending", "Processing", "Compensating"] as const) {
          await create(pendingRecord(`ord-${processState}`, { processState, updatedAt: at(5_000) }));
        }
        expect(await store.countFinishedBetween(at(0), at(60_000))).toBe(4);
        expect(await store.countFinishedBetween(at(0), at(60_001))).toBe(5);
        expect(await store.countFinishedBetween(at(-1), at(10_000))).toBe(2);
        expect(await store.countFinishedBetween(at(15_000), at(25_000))).toBe(1);
        expect(await store.countFinishedBetween(at(61_000), at(120_000))).toBe(0);
      });

      it("counts the same records per clock minute of their last change and terminal state", async () => {
        const seeded = [
          ["ord-m1", "Processed", 0],
          ["ord-m2", "Processed", 59_999],
          ["ord-m3", "Error", 30_000],
          ["ord-m4", "Processed", 60_000],
          ["ord-m5", "CompensationFailed", 119_999],
          ["ord-m6", "Compensated", 120_000], // at `to`: left out
          ["ord-m7", "Error", -1], // before `from`: left out
          ["ord-m8", "Processing", 10_000], // not finished
          ["ord-m9", "Compensating", 70_000],
        ] as const;
        for (const [orderId, processState, ms] of seeded) {
          await create(pendingRecord(orderId, { processState, updatedAt: at(ms) }));
        }
        const counts = await store.countFinishedPerMinute(at(0), at(120_000));
        const sorted = [...counts].sort(
          (a, b) => a.minute.localeCompare(b.minute) || a.processState.localeCompare(b.processState),
        );
        expect(sorted).toEqual([
          { minute: "2026-01-01T00:00", processState: "Error", count: 1 },
          { minute: "2026-01-01T00:00", processState: "Processed", count: 2 },
          { minute: "2026-01-01T00:01", processState: "CompensationFailed", count: 1 },
          { minute: "2026-01-01T00:01", processState: "Processed", count: 1 },
        ]);
        expect(await store.countFinishedPerMinute(at(200_000), at(260_000))).toEqual([]);
      });
    });

    describe("recent list", () => {
      /** Seven records changed at distinct times (two share one), in three states. */
      async function seedRecent(): Promise<void> {
        const states = ["Error", "Processed", "Error", "Pending", "Error", "Processed", "Error"] as const;
        for (const [i, processState] of states.entries()) {
          await create({
            ...pendingRecord(`ord-r${i}`),
            processState,
            updatedAt: at(i === 6 ? 5_000 : i * 1_000),
          });
        }
      }

      async function everyPage(
        state: StateRecord["processState"] | null,
        maxItems: number,
      ): Promise<string[][]> {
        const pages: string[][] = [];
        let token: string | null = null;
        do {
          const page = await store.listRecent({ state, maxItems, continuationToken: token });
          pages.push(page.items.map((r) => r.orderId));
          token = page.continuationToken;
        } while (token);
        return pages;
      }

      it("lists every record newest change first, ties by orderId descending, page by page", async () => {
        await seedRecent();
        expect(await everyPage(null, 3)).toEqual([
          ["ord-r6", "ord-r5", "ord-r4"],
          ["ord-r3", "ord-r2", "ord-r1"],
          ["ord-r0"],
        ]);
      });

      it("lists the records of one state only", async () => {
        await seedRecent();
        expect((await everyPage("Error", 2)).flat()).toEqual(["ord-r6", "ord-r4", "ord-r2", "ord-r0"]);
        expect(await everyPage("Compensated", 5)).toEqual([[]]);
      });

      it("moves a record changed between pages to the front, without showing it twice", async () => {
        await seedRecent();
        const first = await store.listRecent({ state: null, maxItems: 3 });
        const seen = await store.get("ord-r5");
        if (!seen) throw new Error("ord-r5 is missing");
        await store.replace({ ...withoutEtag(seen), updatedAt: at(9_000) }, seen._etag);
        const rest = await store.listRecent({
          state: null,
          maxItems: 10,
          continuationToken: first.continuationToken,
        });
        expect(rest.items.map((r) => r.orderId)).toEqual(["ord-r3", "ord-r2", "ord-r1", "ord-r0"]);
        expect((await store.listRecent({ state: null, maxItems: 1 })).items[0]?.orderId).toBe("ord-r5");
      });

      it("refuses a token issued for another state's list", async () => {
        await seedRecent();
        const page = await store.listRecent({ state: "Error", maxItems: 1 });
        await expect(
          store.listRecent({ state: "Processed", maxItems: 1, continuationToken: page.continuationToken }),
        ).rejects.toThrow(InvalidContinuationTokenError);
      });
    });
  });
}
