import { type BlockBlobClient, type ContainerClient, RestError } from "@azure/storage-blob";
import { checkedRecordedScan } from "../../domain/recorded-scan.js";
import type { RecordedScan, ScanJournal } from "../../ports/scan-journal.js";

/** The journal's blob, beside the Supervisor's lease blob in the lease container. */
export const SCAN_JOURNAL_BLOB = "supervisor-last-scan.json";

/**
 * The scan journal as one small JSON blob, overwritten by every record (last writer wins: only the
 * lease holder scans, so writers do not overlap in practice). A missing blob, or a missing container,
 * reads as no scan yet; the first record creates the container if the deployment did not.
 */
export class BlobScanJournal implements ScanJournal {
  private readonly blob: BlockBlobClient;

  constructor(
    private readonly container: ContainerClient,
    name = SCAN_JOURNAL_BLOB,
  ) {
    this.blob = container.getBlockBlobClient(name);
  }

  async record(scan: RecordedScan): Promise<void> {
    const text = JSON.stringify(checkedRecordedScan(scan));
    try {
      await this.upload(text);
    } catch (error) {
      if (!(error instanceof RestError && error.code === "ContainerNotFound")) throw error;
      await this.container.createIfNotExists();
      await this.upload(text);
    }
  }

  async last(): Promise<RecordedScan | null> {
    let content: Buffer;
    try {
      content = await this.blob.downloadToBuffer();
    } catch (error) {
      if (error instanceof RestError && error.statusCode === 404) return null;
      throw error;
    }
    return checkedRecordedScan(JSON.parse(content.toString("utf8")));
  }

  private async upload(text: string): Promise<void> {
    await this.blob.upload(text, Buffer.byteLength(text), {
      blobHTTPHeaders: { blobContentType: "application/json" },
    });
  }
}
