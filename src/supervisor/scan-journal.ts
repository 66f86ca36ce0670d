import type { RecordedScan } from "../domain/recorded-scan.js";
import { toInstant } from "../domain/time.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { ScanJournal } from "../ports/scan-journal.js";
import type { ScanReport } from "./supervisor.js";

export interface JournaledScanDeps {
  readonly journal: ScanJournal;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The holder the Supervisor names in its lease. */
  readonly holder: string;
}

/**
 * The Supervisor's scan (what `createSupervisor` returns), each scan it runs kept in the journal as the
 * last scan, so the statistics can show it whichever worker serves them. A skipped scan (another
 * Supervisor held the lease) is not recorded: it would hide the last real one. A scan that throws is not
 * recorded either; its error goes to the caller as before. A journal that cannot be written is logged
 * (`supervisor.journal.failed`) and never fails the scan, whose report is returned as it was.
 */
export function journaledScan(
  scan: () => Promise<ScanReport>,
  deps: JournaledScanDeps,
): () => Promise<ScanReport> {
  return async () => {
    const startedAt = toInstant(deps.clock.now());
    const report = await scan();
    if (report.skipped) return report;
    const entry = recordedScanOf(report, deps.holder, startedAt, toInstant(deps.clock.now()));
    try {
      await deps.journal.record(entry);
    } catch (error) {
      deps.logger.error("supervisor.journal.failed", { holder: deps.holder, error });
    }
    return report;
  };
}

function recordedScanOf(
  report: ScanReport,
  holder: string,
  startedAt: string,
  finishedAt: string,
): RecordedScan {
  const { scanned, resets, toError, toCompensation, stalled, lostRaces, truncated, leaseLost } = report;
  return {
    holder,
    startedAt,
    finishedAt,
    found: { scanned, resets, toError, toCompensation, stalled, lostRaces, truncated, leaseLost },
    cost: { requestUnits: report.requestUnits, durationMs: report.durationMs, pages: report.pages },
  };
}
