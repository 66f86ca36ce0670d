import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import type { Lease, LeaseGrant } from "../../src/ports/lease.js";

export interface LeaseFixture {
  readonly lease: Lease;
  /** The same named lease through a second client/connection. */
  readonly otherHandle: () => Promise<Lease>;
  /** The clock the adapter judges expiry by; without it the time-dependent cases are skipped. */
  readonly clock?: VirtualClock;
  dispose(): Promise<void>;
}

/** Within the 15-60 s that Azure blob leases accept, so every adapter can run the same cases. */
const DURATION_MS = 30_000;

/** The behaviour every Lease adapter must show. */
export function describeLeaseContract(adapterName: string, createFixture: () => Promise<LeaseFixture>): void {
  describe(`Lease contract: ${adapterName}`, () => {
    let fixture: LeaseFixture;
    let lease: Lease;
    let other: Lease;

    beforeEach(async () => {
      fixture = await createFixture();
      lease = fixture.lease;
      other = await fixture.otherHandle();
    });

    afterEach(async () => {
      await fixture.dispose();
    });

    it("grants the first acquire", async () => {
      const grant = await lease.tryAcquire("holder-a", DURATION_MS);

      expect(grant).not.toBeNull();
      expect(grant?.holder).toBe("holder-a");
      expect(grant?.leaseId).toEqual(expect.any(String));
      expect(grant?.leaseId).not.toBe("");
      expect(Number.isNaN(grant?.expiresAt.getTime())).toBe(false);
      expect(other.name).toBe(lease.name);
    });

    it("refuses every other acquire while the lease is held", async () => {
      expect(await lease.tryAcquire("holder-a", DURATION_MS)).not.toBeNull();

      expect(await other.tryAcquire("holder-b", DURATION_MS)).toBeNull();
      expect(await lease.tryAcquire("holder-c", DURATION_MS)).toBeNull();
    });

    it("grants exactly one of 20 concurrent acquires from two handles", async () => {
      const attempts = Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? lease : other).tryAcquire(`holder-${i}`, DURATION_MS),
      );
      const grants = (await Promise.all(attempts)).filter((grant) => grant !== null);

      expect(grants).toHaveLength(1);
    });

    it("renews a held lease under the same lease id", async () => {
      const grant = await acquire(lease, "holder-a");

      const renewed = await lease.renew(grant);

      expect(renewed?.leaseId).toBe(grant.leaseId);
      expect(renewed?.holder).toBe("holder-a");
      expect(await other.tryAcquire("holder-b", DURATION_MS)).toBeNull();
    });

    it("lets another holder acquire at once after a release", async () => {
      const grant = await acquire(lease, "holder-a");

      await lease.release(grant);

      expect(await other.tryAcquire("holder-b", DURATION_MS)).not.toBeNull();
    });

    it("refuses to renew a released lease, and a second release does nothing", async () => {
      const grant = await acquire(lease, "holder-a");
      await lease.release(grant);

      expect(await lease.renew(grant)).toBeNull();
      await expect(lease.release(grant)).resolves.toBeUndefined();
      expect(await other.tryAcquire("holder-b", DURATION_MS)).not.toBeNull();
    });

    it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
      "rejects durationMs %s with a RangeError and takes nothing",
      async (durationMs) => {
        await expect(lease.tryAcquire("holder-a", durationMs)).rejects.toThrow(RangeError);
        await expect(lease.tryAcquire("holder-a", durationMs)).rejects.toThrow(/durationMs/);
        expect(await acquire(other, "holder-b")).toMatchObject({
          holder: "holder-b",
          durationMs: DURATION_MS,
        });
      },
    );

    describe("as time passes", () => {
      let clock: VirtualClock;

      beforeEach((context) => {
        if (!fixture.clock) return context.skip("the adapter's fixture has no virtual clock");
        clock = fixture.clock;
      });

      it("expires the grant durationMs after the acquire", async () => {
        const start = clock.now().getTime();
        const grant = await acquire(lease, "holder-a");

        expect(grant.expiresAt.getTime()).toBe(start + DURATION_MS);
        await clock.advance(DURATION_MS - 1);
        expect(await other.tryAcquire("holder-b", DURATION_MS)).toBeNull();
      });

      it("lets another holder take an expired lease; the old grant can then neither renew nor release it", async () => {
        const first = await acquire(lease, "holder-a");
        await clock.advance(DURATION_MS + 1);

        const second = await acquire(other, "holder-b");
        expect(second.leaseId).not.toBe(first.leaseId);

        expect(await lease.renew(first)).toBeNull();
        await lease.release(first);
        expect(await lease.tryAcquire("holder-c", DURATION_MS)).toBeNull();
        expect(await other.renew(second)).not.toBeNull();
      });

      it("extends the lease on renew, past the original expiry", async () => {
        const grant = await acquire(lease, "holder-a");
        await clock.advance(DURATION_MS / 2);

        const renewed = await lease.renew(grant);
        expect(renewed?.expiresAt.getTime()).toBe(clock.now().getTime() + DURATION_MS);
        await clock.advance(DURATION_MS / 2 + DURATION_MS / 4);
        expect(await other.tryAcquire("holder-b", DURATION_MS)).toBeNull();

        await clock.advance(DURATION_MS / 2);
        expect(await other.tryAcquire("holder-b", DURATION_MS)).not.toBeNull();
      });

      it("renews an expired lease that nobody has taken", async () => {
        const grant = await acquire(lease, "holder-a");
        await clock.advance(DURATION_MS + 1);

        expect(await lease.renew(grant)).not.toBeNull();
        expect(await other.tryAcquire("holder-b", DURATION_MS)).toBeNull();
      });
    });
  });
}

async function acquire(lease: Lease, holder: string): Promise<LeaseGrant> {
  const grant = await lease.tryAcquire(holder, DURATION_MS);
  if (!grant) throw new Error(`expected ${holder} to acquire lease ${lease.name}`);
  return grant;
}
