import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AzuriteBlob, freshContainer, startAzuriteBlob } from "../../laptop/stand-ins/azurite.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { BlobLease } from "../../src/adapters/storage/blob-lease.js";
import { BlobScanJournal, SCAN_JOURNAL_BLOB } from "../../src/adapters/storage/blob-scan-journal.js";
import { describeScanJournalContract, recordedScan } from "../contracts/scan-journal.contract.js";

let azurite: AzuriteBlob;

beforeAll(async () => {
  azurite = await startAzuriteBlob();
}, 60_000);

afterAll(async () => {
  await azurite?.stop();
});

const leaseContainer = () => freshContainer(azurite);

describeScanJournalContract("BlobScanJournal on Azurite", async () => {
  const leases = leaseContainer();
  return {
    journal: new BlobScanJournal(leases.container()),
    otherHandle: async () => new BlobScanJournal(leases.container()),
    dispose: leases.dispose,
  };
});

describe("BlobScanJournal", () => {
  it("creates the lease container on its first record, and writes one JSON blob beside the lease blob", async () => {
    const leases = leaseContainer();
    try {
      expect(await leases.container().exists()).toBe(false);
      const journal = new BlobScanJournal(leases.container());
      expect(await journal.last()).toBeNull();
      const lease = new BlobLease(leases.container(), "supervisor", new SystemClock());
      const grant = await lease.tryAcquire("worker-1:4242", 30_000);
      expect(grant).not.toBeNull();
      // Written while the lease blob is leased: the journal is a blob of its own.
      await journal.record(recordedScan());
      const blobs: string[] = [];
      for await (const blob of leases.container().listBlobsFlat()) blobs.push(blob.name);
      expect(blobs.sort()).toEqual(["supervisor", SCAN_JOURNAL_BLOB]);
      const properties = await leases.container().getBlobClient(SCAN_JOURNAL_BLOB).getProperties();
      expect(properties.contentType).toBe("application/json");
      expect(await journal.last()).toEqual(recordedScan());
      if (grant) await lease.release(grant);
    } finally {
      await leases.dispose();
    }
  });

  it("refuses a blob that does not hold a recorded scan, naming what is wrong", async () => {
    const leases = leaseContainer();
    try {
      await leases.container().createIfNotExists();
      const text = JSON.stringify({ ...recordedScan(), holder: "" });
      await leases.container().getBlockBlobClient(SCAN_JOURNAL_BLOB).upload(text, text.length);
      await expect(new BlobScanJournal(leases.container()).last()).rejects.toThrow(/holder/);
    } finally {
      await leases.dispose();
    }
  });
});
