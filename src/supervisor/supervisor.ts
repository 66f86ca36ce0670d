import type { RandomSource } from "../domain/backoff.js";
import { compensationFailure, errorSummary, type StateRecord } from "../domain/state-record.js";
import { type OrderStatus, statusMessageFor } from "../domain/status-message.js";
import { toInstant } from "../domain/time.js";
import type { RecoveryPolicy } from "../domain/transition-commands.js";
import type { AlertSink } from "../ports/alerts.js";
import type { LeaseGrant } from "../ports/lease.js";
import type { StateStore } from "../ports/state-store.js";
import type { StatusNotifier } from "../ports/status-notifier.js";
import { updateAsRead } from "../state/record-updates.js";
import type { Span } from "../telemetry/telemetry.js";
import { type ExpiryVerdict, type InterruptionPolicy, judgeExpiry } from "./interruptions.js";
import { keepLease, type LeaderDeps, leaderScan } from "./leader-scan.js";
import {
  NOTHING,
  type RecoveryCounts,
  type RecoveryKind,
  recoveryKind,
  type ScanCounts,
  type ScanReport,
} from "./scan-report.js";
import { traceRecovery } from "./scan-telemetry.js";

export type { ScanReport };

export interface SupervisorDeps extends LeaderDeps {
  readonly states: StateStore;
  readonly alerts: AlertSink;
  readonly notifier: StatusNotifier;
  readonly random: RandomSource;
  readonly policy: RecoveryPolicy;
  readonly pageSize: number;
  readonly maxPages: number;
  /**
   * How to tell a host's downtime from an attempt out of time (interruptions.ts). Without it every
   * expired attempt is charged to its order.
   */
  readonly interruptions?: InterruptionPolicy;
}

/**
 * The Supervisor: finds attempts past their deadline and arranges recovery; it never runs a step itself.
 * Only the holder of the lease scans (leader election), and each recovery is a conditional update on
 * the expired `lockedBy`, so an attempt that finished meanwhile, or another Supervisor, wins cleanly.
 * A scan finds every expired attempt however old, bounded by a page size and a page budget (the next
 * scan continues), and reports what it cost.
 */
export function createSupervisor(deps: SupervisorDeps): () => Promise<ScanReport> {
  return () => leaderScan(deps, (grant, span) => scanExpired(deps, grant, span));
}

/** One scan by the lease holder: page by page through the expired attempts, each recovered in turn. */
async function scanExpired(deps: SupervisorDeps, grant: LeaseGrant, span: Span): Promise<ScanReport> {
  const counts: ScanCounts = { ...NOTHING };
  const lease = keepLease(deps, grant);
  try {
    const now = toInstant(deps.clock.now());
    let token: string | null = null;
    do {
      if (counts.pages >= deps.maxPages) {
        counts.truncated = true;
        break;
      }
      const page = await deps.states.queryExpired({
        now,
        maxItems: deps.pageSize,
        continuationToken: token,
      });
      counts.pages++;
      counts.scanned += page.items.length;
      counts.requestUnits += page.cost.requestUnits;
      counts.durationMs += page.cost.durationMs;
      for (const record of page.items) {
        if (!(await lease.stillHeld())) {
          counts.leaseLost = true;
          deps.logger.warn("supervisor.lease.lost", { holder: deps.holder, lease: deps.lease.name });
          break;
        }
        await recover(deps, record, now, counts, span);
      }
      token = counts.leaseLost ? null : page.continuationToken;
    } while (token);
  } finally {
    await lease.release();
  }
  const report: ScanReport = { skipped: false, ...counts };
  deps.logger.info("supervisor.scan", { holder: deps.holder, ...report });
  return report;
}

/** Recovers one expired attempt, unless it changed since the query (a lost race, left alone). */
async function recover(
  deps: SupervisorDeps,
  record: StateRecord & { _etag: string },
  now: string,
  counts: RecoveryCounts,
  scanSpan: Span,
): Promise<void> {
  const started = deps.clock.now();
  const expiredOwner = record.lockedBy ?? "";
  const fields = {
    orderId: record.orderId,
    attempt: record.attempt,
    expiredOwner,
    completeBy: record.completeBy,
  };
  const verdict = await judge(deps, record, now);
  if (verdict.kind === "wait") {
    counts.waiting++;
    return;
  }
  if (verdict.kind === "unjudged" || verdict.kind === "suspended") {
    counts[verdict.kind]++;
    // Neither is the order's doing, nor evidence that its attempt ran out of time: nothing is written.
    deps.logger.warn(`supervisor.recovery.${verdict.kind}`, { ...fields, reason: verdict.reason });
    return;
  }
  if (verdict.kind === "stillRunning" && (await extend(deps, record, now, verdict, counts))) return;
  const interruption = verdict.kind === "interrupted" ? verdict.reason : undefined;
  const outcome = await updateAsRead(deps.states, record, "supervisor", {
    type: "recover",
    expectedLockedBy: expiredOwner,
    now,
    policy: deps.policy,
    random: deps.random,
    ...(interruption !== undefined ? { interruption } : {}),
  });
  if (!outcome.ok) {
    counts.lostRaces++;
    deps.logger.info("supervisor.recovery.skipped", { ...fields, reason: outcome.reason });
    return;
  }
  const after = outcome.record;
  const kind = recoveryKind(record, after);
  traceRecovery(deps, { before: record, after, kind, started, scanSpan });
  const spared = after.hostInterruptions > record.hostInterruptions;
  if (spared) counts.spared++;
  deps.logger.warn("supervisor.recovered", {
    ...fields,
    processState: after.processState,
    failureCount: after.failureCount,
    notBefore: after.notBefore,
    ...(spared ? { charged: false, interruption } : { charged: true }),
  });
  await settleRecovery(deps, after, kind, now, counts);
}

/** What the attempt's orchestration says about its expiry; a failed lookup is an ordinary expiry. */
async function judge(deps: SupervisorDeps, record: StateRecord, now: string): Promise<ExpiryVerdict> {
  if (!deps.interruptions) return { kind: "expired" };
  try {
    return await judgeExpiry(record, now, deps.interruptions);
  } catch (error) {
    deps.logger.warn("supervisor.orchestration-lookup.failed", {
      orderId: record.orderId,
      attempt: record.attempt,
      instanceId: record.lockedBy,
      error,
    });
    return { kind: "expired" };
  }
}

/** Gives a held-up attempt its deadline again; false when the record refuses (the limit), to recover it instead. */
async function extend(
  deps: SupervisorDeps,
  record: StateRecord & { _etag: string },
  now: string,
  verdict: Extract<ExpiryVerdict, { kind: "stillRunning" }>,
  counts: RecoveryCounts,
): Promise<boolean> {
  const outcome = await updateAsRead(deps.states, record, "supervisor", {
    type: "extendDeadline",
    expectedLockedBy: record.lockedBy ?? "",
    now,
    completeBy: verdict.completeBy,
    reason: verdict.reason,
    policy: deps.policy,
  });
  const fields = { orderId: record.orderId, attempt: record.attempt, instanceId: record.lockedBy };
  if (outcome.ok) {
    counts.extended++;
    deps.logger.warn("supervisor.deadline-extended", {
      ...fields,
      completeBy: verdict.completeBy,
      reason: verdict.reason,
      hostInterruptions: outcome.record.hostInterruptions,
    });
    return true;
  }
  if (outcome.reason === "refused" && outcome.error.code === "limitReached") return false;
  counts.lostRaces++;
  deps.logger.info("supervisor.recovery.skipped", { ...fields, reason: outcome.reason });
  return true;
}

/** Counts what a recovery led to, and tells whoever must hear of it: the submitter, the operators. */
async function settleRecovery(
  deps: SupervisorDeps,
  after: StateRecord,
  kind: RecoveryKind,
  now: string,
  counts: RecoveryCounts,
): Promise<void> {
  if (kind === "retry") {
    // Back to Pending, or a compensation handed back for another attempt: the starter takes it next.
    counts.resets++;
    return;
  }
  if (kind === "compensate") {
    // Past the limit, by policy: the starter claims the compensation next; the submitter hears of it.
    counts.toCompensation++;
    await notify(deps, after, "compensating", now);
    return;
  }
  const compensation = kind === "stalled";
  if (compensation) counts.stalled++;
  else counts.toError++;
  await deps.alerts.raise({
    kind: compensation ? "CompensationFailed" : "RecoveriesExhausted",
    orderId: after.orderId,
    reason: compensation ? compensationFailure(after) : errorSummary(after),
    at: now,
  });
  await notify(deps, after, compensation ? "compensationFailed" : "failed", now);
}

async function notify(
  deps: SupervisorDeps,
  record: StateRecord,
  status: OrderStatus,
  at: string,
): Promise<void> {
  if (record.replyTo === null) return;
  await deps.notifier.notify(
    record.replyTo,
    statusMessageFor(record, status, at, record.lastError?.message ?? null),
  );
}
