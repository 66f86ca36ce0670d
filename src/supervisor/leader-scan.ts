import type { Clock } from "../ports/clock.js";
import type { Lease, LeaseGrant } from "../ports/lease.js";
import type { Logger } from "../ports/logger.js";
import { instrumentsOf } from "../telemetry/instruments.js";
import {
  globalTelemetry,
  markFailed,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  startSpan,
  type Telemetry,
} from "../telemetry/telemetry.js";
import { NOTHING, type ScanReport } from "./scan-report.js";
import { scanAttributes } from "./scan-telemetry.js";

/** What leader election needs: the lease, who asks for it, and where the scan's span and metrics go. */
export interface LeaderDeps {
  readonly lease: Lease;
  /** Names this Supervisor in the lease, so operators can see who holds it. */
  readonly holder: string;
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where the scan's span, the recoveries' spans and the scan metrics go (default: the global providers). */
  readonly telemetry?: Telemetry;
}

/**
 * One tick: only the lease holder scans (leader election). Each scan is a trace of its own, and each
 * recovery it makes a span in the order's trace linked to it; a tick that finds the lease held
 * elsewhere makes no span: every instance ticks, one scans.
 */
export async function leaderScan(
  deps: LeaderDeps,
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

/**
 * The lease for the length of one scan: checked before every update, and renewed once half of it has
 * run, so a long scan keeps it and a Supervisor that lost it stops before writing again.
 */
export function keepLease(deps: LeaderDeps, acquired: LeaseGrant) {
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
