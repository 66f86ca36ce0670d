import { randomUUID } from "node:crypto";
import type { Statement, Transaction } from "better-sqlite3";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import type { Clock } from "../../src/ports/clock.js";
import type { Lease, LeaseGrant } from "../../src/ports/lease.js";

interface LeaseRow {
  lease_id: string;
  expires_at: number;
}

/**
 * A named lease kept as one row of the `leases` table. Expiry is judged by the injected clock, so every
 * process sharing the database file must share a time source (the system clock, or one virtual clock).
 */
export class SqliteLease implements Lease {
  private readonly acquire: Transaction<(holder: string, durationMs: number) => LeaseGrant | null>;
  private readonly extend: Statement<[number, string, string]>;
  private readonly remove: Statement<[string, string]>;

  constructor(
    db: EmbeddedDatabase,
    private readonly clock: Clock,
    readonly name: string,
  ) {
    const select = db.prepare<[string], LeaseRow>("SELECT lease_id, expires_at FROM leases WHERE name = ?");
    const upsert = db.prepare<[string, string, string, number]>(
      `INSERT INTO leases (name, lease_id, holder, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET
         lease_id = excluded.lease_id, holder = excluded.holder, expires_at = excluded.expires_at`,
    );
    this.acquire = db.transaction((holder: string, durationMs: number) => {
      const now = this.clock.now().getTime();
      const row = select.get(this.name);
      if (row && row.expires_at > now) return null;
      const grant: LeaseGrant = {
        leaseId: randomUUID(),
        holder,
        durationMs,
        expiresAt: new Date(now + durationMs),
      };
      upsert.run(this.name, grant.leaseId, holder, grant.expiresAt.getTime());
      return grant;
    });
    this.extend = db.prepare("UPDATE leases SET expires_at = ? WHERE name = ? AND lease_id = ?");
    this.remove = db.prepare("DELETE FROM leases WHERE name = ? AND lease_id = ?");
  }

  async tryAcquire(holder: string, durationMs: number): Promise<LeaseGrant | null> {
    checkDuration(durationMs);
    // IMMEDIATE takes the write lock before the read, so two connections cannot both see the lease free.
    return this.acquire.immediate(holder, durationMs);
  }

  /** Succeeds while the row still has the grant's lease id, even past expiry (as Azure blob leases do). */
  async renew(grant: LeaseGrant): Promise<LeaseGrant | null> {
    const expiresAt = new Date(this.clock.now().getTime() + grant.durationMs);
    const { changes } = this.extend.run(expiresAt.getTime(), this.name, grant.leaseId);
    return changes === 1 ? { ...grant, expiresAt } : null;
  }

  async release(grant: LeaseGrant): Promise<void> {
    this.remove.run(this.name, grant.leaseId);
  }
}

function checkDuration(durationMs: number): void {
  if (!Number.isSafeInteger(durationMs) || durationMs <= 0) {
    throw new RangeError(`durationMs must be a positive integer; got ${durationMs}`);
  }
}
