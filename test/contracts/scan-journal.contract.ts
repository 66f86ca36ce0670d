import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordedScan, ScanJournal } from "../../src/ports/scan-journal.js";
import { T0 } from "../support/records.js";

export interface ScanJournalFixture {
  readonly journal: ScanJournal;
  /** The same journal through a second client or connection: another worker of the app. */
  readonly otherHandle: () => Promise<ScanJournal>;
  dispose(): Promise<void>;
}

/** A scan that found and cost something in every field, so a field lost on the way shows. */
export function recordedScan(overrides: Partial<RecordedScan> = {}): RecordedScan {
  return {
    holder: "worker-1:4242",
    startedAt: T0,
    finishedAt: "2026-01-01T00:00:01.250Z",
    found: {
      scanned: 12,
      resets: 7,
      toError: 2,
      toCompensation: 1,
      stalled: 1,
      lostRaces: 1,
      truncated: true,
      leaseLost: false,
    },
    cost: { requestUnits: 41.5, durationMs: 1_250.5, pages: 3 },
    ...overrides,
  };
}

/** The behaviour every ScanJournal adapter must show. */
export function describeScanJournalContract(
  adapterName: string,
  createFixture: () => Promise<ScanJournalFixture>,
): void {
  describe(`ScanJournal contract: ${adapterName}`, () => {
    let fixture: ScanJournalFixture;
    let journal: ScanJournal;

    beforeEach(async () => {
      fixture = await createFixture();
      journal = fixture.journal;
    });

    afterEach(async () => {
      await fixture.dispose();
    });

    it("has no last scan before the first is recorded", async () => {
      expect(await journal.last()).toBeNull();
    });

    it("returns the recorded scan, every field as it was", async () => {
      await journal.record(recordedScan());
      expect(await journal.last()).toEqual(recordedScan());
    });

    it("keeps only the last scan: each record replaces the one before", async () => {
      await journal.record(recordedScan());
      const later = recordedScan({
        holder: "worker-2:7",
        startedAt: "2026-01-01T00:01:00.000Z",
        finishedAt: "2026-01-01T00:01:00.100Z",
        found: { ...recordedScan().found, scanned: 0, resets: 0, truncated: false, leaseLost: true },
      });
      await journal.record(later);
      expect(await journal.last()).toEqual(later);
    });

    it("shows a scan recorded by one worker to another", async () => {
      const other = await fixture.otherHandle();
      await journal.record(recordedScan({ holder: "the-lease-holder" }));
      expect((await other.last())?.holder).toBe("the-lease-holder");
      await other.record(recordedScan({ holder: "the-next-holder" }));
      expect((await journal.last())?.holder).toBe("the-next-holder");
    });

    it("refuses to record something that is not a scan, and keeps the last one", async () => {
      await journal.record(recordedScan());
      const broken = { ...recordedScan(), found: { scanned: -1 } } as unknown as RecordedScan;
      await expect(journal.record(broken)).rejects.toThrow(/found/);
      expect(await journal.last()).toEqual(recordedScan());
    });
  });
}
