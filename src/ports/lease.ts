export interface LeaseGrant {
  readonly leaseId: string;
  readonly holder: string;
  readonly expiresAt: Date;
}

/**
 * One named, exclusive, expiring lease (leader election): at most one holder at a time; a holder that
 * stops renewing loses it when it expires, and another may then take it.
 */
export interface Lease {
  readonly name: string;
  /** Takes the lease for `durationMs` if it is free or expired; null while someone else holds it. */
  tryAcquire(holder: string, durationMs: number): Promise<LeaseGrant | null>;
  /** Extends a lease still held under `grant`; null if it was lost (expired and taken, or released). */
  renew(grant: LeaseGrant, durationMs: number): Promise<LeaseGrant | null>;
  /** Gives the lease up; does nothing if it was already lost. */
  release(grant: LeaseGrant): Promise<void>;
}
