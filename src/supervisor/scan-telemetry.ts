import type { StateRecord } from "../domain/state-record.js";
import type { Clock } from "../ports/clock.js";
import { instrumentsOf } from "../telemetry/instruments.js";
import {
  type Attributes,
  contextFrom,
  globalTelemetry,
  type Span,
  SpanKind,
  startSpan,
  type Telemetry,
} from "../telemetry/telemetry.js";
import type { RecoveryKind, ScanReport } from "./scan-report.js";

// What the Supervisor's scans and recoveries leave in traces and metrics (docs/observability.md).

export function traceRecovery(
  deps: { readonly clock: Clock; readonly telemetry?: Telemetry | undefined },
  recovery: { before: StateRecord; after: StateRecord; kind: RecoveryKind; started: Date; scanSpan: Span },
): void {
  const { before, after, kind } = recovery;
  const telemetry = deps.telemetry ?? globalTelemetry();
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

/** The scan span's attributes: what the scan found and did. */
export function scanAttributes(report: ScanReport): Attributes {
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
