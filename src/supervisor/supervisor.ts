import type { RandomSource } from "../domain/backoff.js";
import { compensationFailure, errorSummary, type StateRecord } from "../domain/state-record.js";
import { type OrderStatus, statusMessageFor } from "../domain/status-message.js";
import { toInstant } from "../domain/time.js";
import type { RecoveryPolicy } from "../domain/transition-commands.js";
import type { AlertSink } from "../ports/alerts.js";
import type { Clock } from "../ports/clock.js";
import type { Lease, LeaseGrant } from "../ports/lease.js";
import type { Logger } from "../ports/logger.js";
import type { StateStore } from "../ports/state-store.js";
import type { StatusNotifier } from "../ports/status-notifier.js";
import { updateAsRead } from "../state/record-updates.js";
import { instrumentsOf } from "../telemetry/instruments.js";
import {
  type Attributes,
  contextFrom,
  globalTelemetry,
  markFailed,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  startSpan,
  type Telemetry,
} from "../telemetry/telemetry.js";
import { type ExpiryVerdict, type InterruptionPolicy, judgeExpiry } from "./interruptions.js";

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
  readonly pageSize: number;
  readonly maxPages: number;
  readonly leaseMs: number;
  /** Where the scan's span, the recoveries' spans and the scan metrics go (default: the global providers). */
  readonly telemetry?: Telemetry;
  /**
   * How to tell a host's downtime from an attempt out of time (interruptions.ts). Without it every
   * expired attempt is charged to its order.
   */
  readonly interruptions?: InterruptionPolicy;
}

export interface ScanReport {
  /** Another Supervisor held the lease: this one did nothing. */
  readonly skipped: boolean;
  readonly pages: number;
  readonly scanned: number;
  /** Back to `Pending` for another attempt, or compensations handed back for another attempt. */
  readonly resets: number;
  readonly toError: number;
  /** Orders past the recovery limit handed to a compensation (`ON_RECOVERIES_EXHAUSTED=compensate`). */
  readonly toCompensation: number;
  /** Compensations past their recovery limit, moved to `CompensationFailed`. */
  readonly stalled: number;
  /** Records someone else changed between the query and the update: left alone. */
  readonly lostRaces: number;
  /** Of the resets, attempts interrupted by their host: recovered with no failure counted. */
  readonly spared: number;
  /** Attempts whose orchestration was still running (its host held it up): given their deadline again. */
  readonly extended: number;
  /** Attempts just past their deadline whose orchestration is about to time them out: left for it. */
  readonly waiting: number;
  /** Attempts whose orchestration could not be asked about (no durable client): left, uncharged (F24-9). */
  readonly unjudged: number;
  /** Attempts whose orchestration an operator suspended: left alone until resumed or terminated (F24-9). */
  readonly suspended: number;
  /** True when the page budget ran out before the query did; the next scan continues. */
  readonly truncated: boolean;
  /** True when the lease could not be renewed during the scan: the scan stopped before its next update. */
  readonly leaseLost: boolean;
  readonly requestUnits: number;
  readonly durationMs: number;
}

const NOTHING: Omit<ScanReport, "skipped"> = {
  pages: 0,
  scanned: 0,
  resets: 0,
  toError: 0,
  toCompensation: 0,
  stalled: 0,
  lostRaces: 0,
  spared: 0,
  extended: 0,
  waiting: 0,
  unjudged: 0,
  suspended: 0,
  truncated: false,
  leaseLost: false,
  requestUnits: 0,
  durationMs: 0,
};

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

type ScanCounts = { -readonly [K in keyof typeof NOTHING]: (typeof NOTHING)[K] };

type RecoveryCounts = Pick<
  ScanCounts,
  | "resets"
  | "toError"
  | "toCompensation"
  | "stalled"
  | "lostRaces"
  | "spared"
  | "extended"
  | "waiting"
  | "unjudged"
  | "suspended"
>;

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
  traceRecovery(deps, { before: record, after, started, scanSpan });
  const spared = after.hostInterruptions > record.hostInterruptions;
  if (spared) counts.spared++;
  deps.logger.warn("supervisor.recovered", {
    ...fields,
    processState: after.processState,
    failureCount: after.failureCount,
    notBefore: after.notBefore,
    ...(spared ? { charged: false, interruption } : { charged: true }),
  });
  await settleRecovery(deps, record, after, now, counts);
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
  before: StateRecord,
  after: StateRecord,
  now: string,
  counts: RecoveryCounts,
): Promise<void> {
  // Back to Pending, or a compensation handed back for another attempt: the starter takes it next.
  const handedBack = before.processState === "Compensating" && after.processState === "Compensating";
  if (after.processState === "Pending" || handedBack) {
    counts.resets++;
    return;
  }
  if (after.processState === "Compensating") {
    // Past the limit, by policy: the starter claims the compensation next; the submitter hears of it.
    counts.toCompensation++;
    await notify(deps, after, "compensating", now);
    return;
  }
  const compensation = after.processState === "CompensationFailed";
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

/**
 * One tick: only the lease holder scans (leader election). Each scan is a trace of its own, and each
 * recovery it makes a span in the order's trace linked to it; a tick that finds the lease held
 * elsewhere makes no span: every instance ticks, one scans.
 */
async function leaderScan(
  deps: SupervisorDeps,
  scan: (grant: LeaseGrant, span: Span) => Promise<ScanReport>,
): Promise<ScanReport> {
  const grant = await deps.lease.tryAcquire(deps.holder, deps.leaseMs);
  if (!grant) {
    deps.logger.debug("supervisor.skipped", {
      holder: deps.holder,
      reason: "lease held by another Supervisor",
    });
    return { skipped: true, ...NOTHING };
  }
  const telemetry = deps.telemetry ?? globalTelemetry();
  const span = startSpan(telemetry.tracer, "supervisor.scan", {
    kind: SpanKind.INTERNAL,
    parent: ROOT_CONTEXT,
    attributes: { "sas.supervisor.holder": deps.holder },
    startTime: deps.clock.now(),
  });
  try {
    const report = await scan(grant, span);
    span.setAttributes(scanAttributes(report));
    const instruments = instrumentsOf(telemetry);
    instruments.scanDuration.record(report.durationMs / 1000);
    instruments.scanRequestUnits.record(report.requestUnits);
    return report;
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    span.end(deps.clock.now());
  }
}

function scanAttributes(report: ScanReport): Attributes {
  return {
    "sas.supervisor.pages": report.pages,
    "sas.supervisor.scanned": report.scanned,
    "sas.supervisor.resets": report.resets,
    "sas.supervisor.to_error": report.toError,
    "sas.supervisor.to_compensation": report.toCompensation,
    "sas.supervisor.stalled": report.stalled,
    "sas.supervisor.lost_races": report.lostRaces,
    "sas.supervisor.spared": report.spared,
    "sas.supervisor.extended": report.extended,
    "sas.supervisor.truncated": report.truncated,
    "sas.supervisor.lease_lost": report.leaseLost,
    "sas.supervisor.request_units": report.requestUnits,
  };
}

/** What a recovery did, as the `sas.recovery` attribute names it. */
function recoveryKind(before: StateRecord, after: StateRecord): string {
  if (after.processState === "Pending") return "retry";
  if (after.processState === "Compensating")
    return before.processState === "Compensating" ? "retry" : "compensate";
  return after.processState === "CompensationFailed" ? "stalled" : "error";
}

function traceRecovery(
  deps: SupervisorDeps,
  recovery: { before: StateRecord; after: StateRecord; started: Date; scanSpan: Span },
): void {
  const { before, after } = recovery;
  const telemetry = deps.telemetry ?? globalTelemetry();
  const kind = recoveryKind(before, after);
  const span = startSpan(telemetry.tracer, "order.recover", {
    kind: SpanKind.INTERNAL,
    parent: contextFrom(before.traceparent),
    links: [{ context: recovery.scanSpan.spanContext() }],
    attributes: {
      "sas.order.id": after.orderId,
      "sas.attempt": before.attempt,
      "sas.recovery": kind,
      "sas.process_state": after.processState,
    },
    startTime: recovery.started,
  });
  span.end(deps.clock.now());
  instrumentsOf(telemetry).recoveries.add(1, { "sas.recovery": kind });
}

/**
 * The lease for the length of one scan: checked before every update, and renewed once half of it has
 * run, so a long scan keeps it and a Supervisor that lost it stops before writing again.
 */
function keepLease(deps: SupervisorDeps, acquired: LeaseGrant) {
  let grant: LeaseGrant | null = acquired;
  return {
    async stillHeld(): Promise<boolean> {
      if (!grant) return false;
      const remainingMs = grant.expiresAt.getTime() - deps.clock.now().getTime();
      if (remainingMs > grant.durationMs / 2) return true;
      grant = await deps.lease.renew(grant);
      return grant !== null;
    },
    async release(): Promise<void> {
      if (grant) await deps.lease.release(grant);
    },
  };
}
