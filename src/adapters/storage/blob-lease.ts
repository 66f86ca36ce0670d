import { randomUUID } from "node:crypto";
import { type BlobClient, BlobLeaseClient, type ContainerClient, RestError } from "@azure/storage-blob";
import type { Clock } from "../../ports/clock.js";
import type { Lease, LeaseGrant } from "../../ports/lease.js";

/** Blob leases last 15 to 60 whole seconds (or forever, which an expiring lease must not be). */
export const MIN_LEASE_MS = 15_000;
export const MAX_LEASE_MS = 60_000;

const HOLDER_KEY = "holder";
const LEASE_ID_KEY = "leaseid";

/**
 * A named lease as an Azure blob lease on one empty blob per name. The storage service judges expiry
 * and enforces exclusivity; the lease id is a GUID proposed here, and the holder is written into the
 * blob's metadata under the new lease, so an operator can see who holds it (`currentHolder`).
 */
export class BlobLease implements Lease {
  private readonly blob: BlobClient;

  constructor(
    private readonly container: ContainerClient,
    readonly name: string,
    private readonly clock: Clock,
  ) {
    if (name === "" || name.length > 1_024) throw new RangeError("a lease name must be 1 to 1024 characters");
    this.blob = container.getBlobClient(name);
  }

  async tryAcquire(holder: string, durationMs: number): Promise<LeaseGrant | null> {
    const seconds = leaseSeconds(durationMs);
    const lease = new BlobLeaseClient(this.blob, randomUUID());
    // Read before the request: the service starts the lease later, so this expiry errs early.
    const start = this.clock.now().getTime();
    try {
      await this.acquireCreatingBlob(lease, seconds);
    } catch (error) {
      if (isStatus(error, 409)) return null; // LeaseAlreadyPresent, or a lease that is breaking
      throw error;
    }
    try {
      await this.blob.setMetadata(
        { [HOLDER_KEY]: encodeURIComponent(holder), [LEASE_ID_KEY]: lease.leaseId },
        { conditions: { leaseId: lease.leaseId } },
      );
    } catch (error) {
      await lease.releaseLease().catch(() => undefined);
      throw error;
    }
    return { leaseId: lease.leaseId, holder, durationMs, expiresAt: new Date(start + durationMs) };
  }

  /** The service renews a lease under its id until someone else leases the blob, even past expiry. */
  async renew(grant: LeaseGrant): Promise<LeaseGrant | null> {
    const start = this.clock.now().getTime();
    try {
      await new BlobLeaseClient(this.blob, grant.leaseId).renewLease();
    } catch (error) {
      if (isLost(error)) return null;
      throw error;
    }
    return { ...grant, expiresAt: new Date(start + grant.durationMs) };
  }

  async release(grant: LeaseGrant): Promise<void> {
    try {
      await new BlobLeaseClient(this.blob, grant.leaseId).releaseLease();
    } catch (error) {
      if (!isLost(error)) throw error;
    }
  }

  /** The holder named by the current lease, or null when nobody holds it. For operators and logs only. */
  async currentHolder(): Promise<string | null> {
    try {
      const properties = await this.blob.getProperties();
      const holder = properties.metadata?.[HOLDER_KEY];
      return properties.leaseState === "leased" && holder !== undefined ? decodeURIComponent(holder) : null;
    } catch (error) {
      if (isStatus(error, 404)) return null;
      throw error;
    }
  }

  private async acquireCreatingBlob(lease: BlobLeaseClient, seconds: number): Promise<void> {
    try {
      await lease.acquireLease(seconds);
      return;
    } catch (error) {
      if (!isStatus(error, 404)) throw error;
    }
    await this.createBlob();
    await lease.acquireLease(seconds);
  }

  private async createBlob(): Promise<void> {
    try {
      await this.uploadEmptyBlob();
    } catch (error) {
      if (!isCode(error, "ContainerNotFound")) throw error;
      await this.container.createIfNotExists();
      await this.uploadEmptyBlob();
    }
  }

  private async uploadEmptyBlob(): Promise<void> {
    try {
      await this.blob.getBlockBlobClient().upload("", 0, { conditions: { ifNoneMatch: "*" } });
    } catch (error) {
      // Another process created the blob first (and may already hold a lease on it).
      if (!isStatus(error, 409) && !isStatus(error, 412)) throw error;
    }
  }
}

function leaseSeconds(durationMs: number): number {
  if (
    !Number.isSafeInteger(durationMs) ||
    durationMs < MIN_LEASE_MS ||
    durationMs > MAX_LEASE_MS ||
    durationMs % 1_000 !== 0
  ) {
    throw new RangeError(
      `durationMs must be a whole number of seconds from ${MIN_LEASE_MS} to ${MAX_LEASE_MS} ms (blob leases last 15 to 60 s); got ${durationMs}`,
    );
  }
  return durationMs / 1_000;
}

/** 409: the lease is not (or no longer) this id's to renew or release; 404: the blob is gone. */
function isLost(error: unknown): boolean {
  return isStatus(error, 409) || isStatus(error, 404);
}

function isStatus(error: unknown, status: number): boolean {
  return error instanceof RestError && error.statusCode === status;
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof RestError && error.code === code;
}
