export interface LeaseGrant {
  readonly leaseId: string;
  readonly holder: string;
  /** The lease's duration, fixed when it was acquired; every renewal extends it by this much. */
  readonly durationMs: number;
  readonly expiresAt: Date;
}

/**
 * One named, exclusive, expiring lease (leader election): at most one holder at a time; a holder that
 * stops renewing loses it when it expires, and another may then take it.
 */
export interface Lease {
  readonly name: string;
  /** Takes the lease for `durationMs` if it is free or expired; null while it is held (by anyone). */
  tryAcquire(holder: string, durationMs: number): Promise<LeaseGrant | null>;
  /**
   * Extends a lease still held under `grant` by its duration, from now; null if it was lost (taken by
   * another holder after it expired, or released). A lease that expired but was not taken renews.
   */
  renew(grant: LeaseGrant): Promise<LeaseGrant | null>;
  /** Gives the lease up; does nothing if it was already lost. */
  release(grant: LeaseGrant): Promise<void>;
}
