import type { RecordedScan } from "../domain/recorded-scan.js";

export type { RecordedScan };

/**
 * Where the Supervisor's last scan is kept, so that any worker can show it: the scan runs on whichever
 * instance holds the lease, and the statistics are served by another. One entry; each record replaces it.
 */
export interface ScanJournal {
  /** Keeps `scan` as the last scan, replacing the one recorded before. */
  record(scan: RecordedScan): Promise<void>;
  /** The scan recorded last, or null when none has been; throws on an entry that is not a recorded scan. */
  last(): Promise<RecordedScan | null>;
}
