import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type BreakerState,
  CLOSED_BREAKER,
  type HalfOpenBreaker,
  type OpenBreaker,
} from "../../src/domain/circuit-breaker.js";
import type { BreakerStore } from "../../src/ports/breaker-store.js";

export interface BreakerStoreFixture {
  readonly store: BreakerStore;
  /** The same breakers through a second client or connection, as another instance has them. */
  readonly otherHandle: () => Promise<BreakerStore>;
  dispose(): Promise<void>;
}

const T = Date.parse("2026-01-01T00:00:00.000Z");

const closed: BreakerState = {
  status: "closed",
  closedAt: T - 60_000,
  consecutiveFailures: 2,
  lastFailureAt: T,
  window: [
    { start: T - 6_000, calls: 7, failures: 1 },
    { start: T, calls: 3, failures: 2 },
  ],
};
const open: OpenBreaker = { status: "open", openedAt: T, openMs: 5_000, nextProbeAt: T + 5_000 };
const halfOpen: HalfOpenBreaker = {
  status: "half-open",
  openedAt: T,
  openMs: 5_000,
  probe: { holder: "agent-7/3f2a", since: T + 5_000, leaseExpiresAt: T + 20_000 },
};

async function created(store: BreakerStore, operation: string, state: BreakerState): Promise<string> {
  const result = await store.write(operation, state, undefined);
  if (!result.written) throw new Error(`${operation} already existed`);
  return result.version;
}

/** The behaviour every BreakerStore adapter must show. */
export function describeBreakerStoreContract(
  adapterName: string,
  createFixture: () => Promise<BreakerStoreFixture>,
): void {
  describe(`BreakerStore contract: ${adapterName}`, () => {
    let fixture: BreakerStoreFixture;
    let store: BreakerStore;
    let other: BreakerStore;

    beforeEach(async () => {
      fixture = await createFixture();
      store = fixture.store;
      other = await fixture.otherHandle();
    });

    afterEach(async () => {
      await fixture.dispose();
    });

    it("has nothing for an operation never written", async () => {
      expect(await store.read("chargePayment")).toBeUndefined();
      expect(await store.readAll()).toEqual([]);
    });

    it.each([
      ["closed", closed],
      ["open", open],
      ["half-open", halfOpen],
    ])("keeps a %s state as written, for every handle", async (_, state) => {
      const version = await created(store, "chargePayment", state);

      expect(await store.read("chargePayment")).toEqual({ state, version });
      expect(await other.read("chargePayment")).toEqual({ state, version });
    });

    it("F27-8: keeps why an open or half-open breaker opened, beside states stored without it", async () => {
      const opening = {
        cause: "rate",
        consecutiveFailures: 1,
        windowCalls: 20,
        windowFailures: 11,
        windowMs: 30_000,
      } as const;
      const charge = await created(store, "chargePayment", { ...open, opening });
      const refund = await created(store, "refundPayment", { ...halfOpen, opening });
      const reserve = await created(store, "reserveInventory", open);

      expect(await other.read("chargePayment")).toEqual({ state: { ...open, opening }, version: charge });
      expect(await other.read("refundPayment")).toEqual({ state: { ...halfOpen, opening }, version: refund });
      expect(await other.read("reserveInventory")).toEqual({ state: open, version: reserve });
    });

    it("creates only where nothing is stored", async () => {
      const version = await created(store, "chargePayment", CLOSED_BREAKER);

      expect(await other.write("chargePayment", open, undefined)).toEqual({ written: false });
      expect(await store.read("chargePayment")).toEqual({ state: CLOSED_BREAKER, version });
    });

    it("replaces on the version read, with a new version each time", async () => {
      const first = await created(store, "chargePayment", CLOSED_BREAKER);
      const second = await store.write("chargePayment", closed, first);
      if (!second.written) throw new Error("the write on the current version lost");
      const third = await other.write("chargePayment", open, second.version);
      if (!third.written) throw new Error("the write on the current version lost");

      expect(new Set([first, second.version, third.version]).size).toBe(3);
      expect(await store.read("chargePayment")).toEqual({ state: open, version: third.version });
    });

    it("refuses a write on a version another handle has replaced, writing nothing", async () => {
      const version = await created(store, "chargePayment", closed);
      const theirs = await other.write("chargePayment", open, version);
      expect(theirs.written).toBe(true);

      expect(await store.write("chargePayment", halfOpen, version)).toEqual({ written: false });
      expect((await store.read("chargePayment"))?.state).toEqual(open);
    });

    it("refuses a replace of an operation never written", async () => {
      const version = await created(store, "chargePayment", closed);

      expect(await store.write("reserveInventory", open, version)).toEqual({ written: false });
      expect(await store.read("reserveInventory")).toBeUndefined();
    });

    it("lets exactly one of many concurrent writes on one version through", async () => {
      const version = await created(store, "chargePayment", CLOSED_BREAKER);
      const writes = Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? store : other).write(
          "chargePayment",
          { ...halfOpen, probe: { ...halfOpen.probe, holder: `prober-${i}` } },
          version,
        ),
      );
      const results = await Promise.all(writes);
      const winners = results.flatMap((result, i) => (result.written ? [i] : []));

      expect(winners).toHaveLength(1);
      const stored = await store.read("chargePayment");
      expect(stored?.state).toMatchObject({ probe: { holder: `prober-${winners[0]}` } });
    });

    it("lets exactly one of many concurrent creates through", async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 === 0 ? store : other).write("notifyCustomer", open, undefined),
        ),
      );

      expect(results.filter((result) => result.written)).toHaveLength(1);
    });

    it("keeps each operation's breaker apart, and lists them all by name", async () => {
      const charge = await created(store, "chargePayment", open);
      const reserve = await created(other, "reserveInventory", closed);
      const refund = await created(store, "refundPayment", halfOpen);

      expect(await other.readAll()).toEqual([
        { operation: "chargePayment", state: open, version: charge },
        { operation: "refundPayment", state: halfOpen, version: refund },
        { operation: "reserveInventory", state: closed, version: reserve },
      ]);
    });
  });
}
