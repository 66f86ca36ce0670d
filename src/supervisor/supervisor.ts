import type { RandomSource } from "../domain/backoff.js";
import type { StateRecord } from "../domain/state-record.js";
import { STATUS_MESSAGE_SCHEMA_VERSION } from "../domain/status-message.js";
import { addMilliseconds, toInstant } from "../domain/time.js";
import type { RecoveryPolicy } from "../domain/transitions.js";
import type { AlertSink } from "../ports/alerts.js";
import type { Clock } from "../ports/clock.js";
import type { Lease } from "../ports/lease.js";
import type { Logger } from "../ports/logger.js";
import type { StateStore } from "../ports/state-store.js";
import type { StatusNotifier } from "../ports/status-notifier.js";
import { updateAsRead } from "../state/record-updates.js";

export interface SupervisorDeps {
  readonly states: StateStore;
  readonly lease: Lease;
  readonly alerts: AlertSink;
  readonly notifier: StatusNotifier;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly logger: Logger;
  /** Names this Supervisor in the lease, so operators can see who holds it. */
  readonly holder: string;
  readonly policy: RecoveryPolicy;
  readonly windowMs: number;
  readonly pageSize: number;
  readonly maxPages: number;
  readonly leaseMs: number;
}

export interface ScanReport {
  /** Another Supervisor held the lease: this one did nothing. */
  readonly skipped: boolean;
  readonly pages: number;
  readonly scanned: number;
  /** Back to `Pending` for another attempt. */
  readonly resets: number;
  readonly toError: number;
  /** Stalled compensations moved to `CompensationFailed`. */
  readonly stalled: number;
  /** Records someone else changed between the query and the update: left alone. */
  readonly lostRaces: number;
  /** True when the page budget ran out before the query did; the next scan continues. */
  readonly truncated: boolean;
  readonly requestUnits: number;
  readonly durationMs: number;
}

const NOTHING: Omit<ScanReport, "skipped"> = {
  pages: 0,
  scanned: 0,
  resets: 0,
  toError: 0,
  stalled: 0,
  lostRaces: 0,
  truncated: false,
  requestUnits: 0,
  durationMs: 0,
};

/**
 * The Supervisor: finds attempts past their deadline and arranges recovery; it never runs a step itself.
 * Only the holder of the lease scans (leader election), and each recovery is a conditional update on
 * the expired `lockedBy`, so an attempt that finished meanwhile, or another Supervisor, wins cleanly.
 * A scan is bounded by a time window, a page size and a page budget, and reports what it cost.
 */
export function createSupervisor(deps: SupervisorDeps): () => Promise<ScanReport> {
  return async () => {
    const grant = await deps.lease.tryAcquire(deps.holder, deps.leaseMs);
    if (!grant) {
      deps.logger.debug("supervisor.skipped", {
        holder: deps.holder,
        reason: "lease held by another Supervisor",
      });
      return { skipped: true, ...NOTHING };
    }
    const counts = { ...NOTHING };
    try {
      const now = toInstant(deps.clock.now());
      const expiredSince = addMilliseconds(now, -deps.windowMs);
      let token: string | null = null;
      do {
        if (counts.pages >= deps.maxPages) {
          counts.truncated = true;
          break;
        }
        const page = await deps.states.queryExpired({
          now,
          expiredSince,
          maxItems: deps.pageSize,
          continuationToken: token,
        });
        counts.pages++;
        counts.scanned += page.items.length;
        counts.requestUnits += page.cost.requestUnits;
        counts.durationMs += page.cost.durationMs;
        for (const record of page.items) await recover(record, now, counts);
        token = page.continuationToken;
      } while (token);
    } finally {
      await deps.lease.release(grant);
    }
    const report: ScanReport = { skipped: false, ...counts };
    deps.logger.info("supervisor.scan", { holder: deps.holder, ...report });
    return report;
  };

  async function recover(
    record: StateRecord & { _etag: string },
    now: string,
    counts: { resets: number; toError: number; stalled: number; lostRaces: number },
  ): Promise<void> {
    const expiredOwner = record.lockedBy ?? "";
    const outcome = await updateAsRead(deps.states, record, "supervisor", {
      type: "recover",
      expectedLockedBy: expiredOwner,
      now,
      policy: deps.policy,
      random: deps.random,
    });
    const fields = {
      orderId: record.orderId,
      attempt: record.attempt,
      expiredOwner,
      completeBy: record.completeBy,
    };
    if (!outcome.ok) {
      counts.lostRaces++;
      deps.logger.info("supervisor.recovery.skipped", { ...fields, reason: outcome.reason });
      return;
    }
    const after = outcome.record;
    deps.logger.warn("supervisor.recovered", {
      ...fields,
      processState: after.processState,
      failureCount: after.failureCount,
      notBefore: after.notBefore,
    });
    if (after.processState === "Pending") {
      counts.resets++;
      return;
    }
    const compensation = after.processState === "CompensationFailed";
    if (compensation) counts.stalled++;
    else counts.toError++;
    await deps.alerts.raise({
      kind: compensation ? "CompensationFailed" : "RecoveriesExhausted",
      orderId: after.orderId,
      reason: after.lastError?.message ?? "recovery limit reached",
      at: now,
    });
    if (after.replyTo !== null) {
      await deps.notifier.notify(after.replyTo, {
        schemaVersion: STATUS_MESSAGE_SCHEMA_VERSION,
        orderId: after.orderId,
        status: compensation ? "compensationFailed" : "failed",
        attempt: after.attempt,
        at: now,
        detail: after.lastError?.message ?? null,
      });
    }
  }
}
