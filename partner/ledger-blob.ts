/**
 * The partner's books in Azure Storage: a journal of append blobs, `journal-000001.jsonl`,
 * `journal-000002.jsonl`, ..., one JSON event a line, in its own container. Opening reads every segment
 * in order and replays it. Writing:
 *
 * - Group commit: events are buffered and written by one append per flush; whatever arrives while an
 *   append is under way goes into the next one, so concurrent calls share their appends.
 * - Every append carries the append-position condition (the length the segment must have). An append
 *   retried after its answer was lost is then refused 412 instead of written twice; the journal checks
 *   by the segment's length and the bytes at that position that it did land.
 * - A segment holds at most 50,000 blocks (the most an append blob takes); the next one is started
 *   before that.
 *
 * One writer only (the partner runs as a single instance): anything else appending to the segments
 * shows up as a length the journal did not expect, which it refuses as a conflict.
 */
import { setTimeout as delay } from "node:timers/promises";
import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { type AppendBlobClient, BlobServiceClient, ContainerClient, RestError } from "@azure/storage-blob";
import type { Logger } from "../src/ports/logger.js";
import { Ledger, type LedgerEvent, type LedgerJournal } from "./ledger.js";

/** The most blocks an append blob takes. */
export const SEGMENT_BLOCK_LIMIT = 50_000;
/** The largest append block the blob service takes. */
const MAX_BLOCK_BYTES = 4 * 1024 * 1024;
const SEGMENT_PREFIX = "journal-";
const SEGMENT_NAME = /^journal-\d{6,}\.jsonl$/;
const DEFAULT_RETRY_DELAYS_MS = [200, 1_000, 5_000];

export function segmentName(index: number): string {
  return `${SEGMENT_PREFIX}${String(index).padStart(6, "0")}.jsonl`;
}

/** Where the journal's container is: a URL reached with the managed identity, or a connection string. */
export type LedgerContainerPlace =
  | { readonly kind: "containerUrl"; readonly url: string; readonly clientId?: string }
  | { readonly kind: "connectionString"; readonly connectionString: string; readonly container: string };

/** `credential` replaces DefaultAzureCredential for a container URL (tests, other hosts). */
export function ledgerContainer(place: LedgerContainerPlace, credential?: TokenCredential): ContainerClient {
  if (place.kind === "connectionString") {
    return BlobServiceClient.fromConnectionString(place.connectionString).getContainerClient(place.container);
  }
  const identity =
    credential ??
    new DefaultAzureCredential(place.clientId ? { managedIdentityClientId: place.clientId } : undefined);
  return new ContainerClient(place.url, identity);
}

export interface BlobLedgerOptions {
  /** Blocks a segment takes before the next one is started (default and most: 50,000). */
  readonly blocksPerSegment?: number;
  /** The waits before each retry of a failed append (default 200 ms, 1 s, 5 s). */
  readonly retryDelaysMs?: readonly number[];
  readonly logger?: Logger;
}

/** The partner's books on append blobs. */
export interface BlobLedger {
  readonly ledger: Ledger;
  /** Events read back when the journal was opened: 0 for a new one. */
  readonly restoredEvents: number;
  /** Segments found when the journal was opened. */
  readonly segments: number;
  /** Writes what is still buffered, then takes no more events. */
  close(): Promise<void>;
}

/** Something else wrote to the journal's segments: the partner cannot tell what its books hold. */
export class JournalConflictError extends Error {
  override readonly name = "JournalConflictError";
}

/** Opens (creating the container if needed) the journal in `container`, and rebuilds the books from it. */
export async function openBlobLedger(
  container: ContainerClient,
  options: BlobLedgerOptions = {},
): Promise<BlobLedger> {
  const blocksPerSegment = options.blocksPerSegment ?? SEGMENT_BLOCK_LIMIT;
  if (!Number.isInteger(blocksPerSegment) || blocksPerSegment < 1 || blocksPerSegment > SEGMENT_BLOCK_LIMIT) {
    throw new RangeError(`blocksPerSegment must be a whole number from 1 to ${SEGMENT_BLOCK_LIMIT}`);
  }
  await container.createIfNotExists();
  const read = await readSegments(container);
  const journal = new BlobJournal(container, read.last, {
    blocksPerSegment,
    retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const ledger = Ledger.replay(read.events, journal);
  return {
    ledger,
    restoredEvents: read.events.length,
    segments: read.segments,
    close: () => journal.close(),
  };
}

interface Segment {
  readonly index: number;
  /** Bytes written or reserved by a block taken for writing. */
  length: number;
  blocks: number;
  created: boolean;
}

async function readSegments(
  container: ContainerClient,
): Promise<{ events: LedgerEvent[]; last: Segment; segments: number }> {
  const names: string[] = [];
  for await (const blob of container.listBlobsFlat({ prefix: SEGMENT_PREFIX })) {
    if (SEGMENT_NAME.test(blob.name)) names.push(blob.name);
  }
  names.sort();
  const events: LedgerEvent[] = [];
  let last: Segment = { index: 1, length: 0, blocks: 0, created: false };
  for (const name of names) {
    const blob = container.getAppendBlobClient(name);
    const properties = await blob.getProperties();
    const length = properties.contentLength ?? 0;
    const text = length > 0 ? (await blob.downloadToBuffer(0, length)).toString("utf8") : "";
    events.push(...parseSegment(name, text));
    const index = Number(name.slice(SEGMENT_PREFIX.length, -".jsonl".length));
    last = { index, length, blocks: properties.blobCommittedBlockCount ?? 0, created: true };
  }
  return { events, last, segments: names.length };
}

function parseSegment(name: string, text: string): LedgerEvent[] {
  if (text !== "" && !text.endsWith("\n")) {
    throw new JournalConflictError(
      `${name} does not end with a whole line: it was not written by the partner`,
    );
  }
  const lines = text.split("\n").slice(0, -1);
  return lines.map((line, i) => {
    try {
      const event = JSON.parse(line) as LedgerEvent;
      if (typeof event !== "object" || event === null || typeof event.kind !== "string") throw new Error();
      return event;
    } catch {
      throw new JournalConflictError(`${name}: line ${i + 1} is not a journal event`);
    }
  });
}

type Item = { readonly line: string } | { readonly clear: true };

type Work =
  | {
      readonly kind: "append";
      readonly segment: Segment;
      readonly position: number;
      readonly data: Buffer;
      readonly lastSeq: number;
    }
  | { readonly kind: "clear"; readonly lastSeq: number };

interface Waiter {
  readonly seq: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface JournalSettings {
  readonly blocksPerSegment: number;
  readonly retryDelaysMs: readonly number[];
  readonly logger?: Logger;
}

class BlobJournal implements LedgerJournal {
  private readonly queue: Item[] = [];
  private readonly waiters: Waiter[] = [];
  /** Items appended, taken for writing, and written, counted from the start. */
  private appended = 0;
  private taken = 0;
  private written = 0;
  /** Taken but not written: retried, unchanged, before anything else. */
  private pending: Work | undefined;
  private running = false;
  private closed = false;

  constructor(
    private readonly container: ContainerClient,
    private segment: Segment,
    private readonly settings: JournalSettings,
  ) {}

  append(event: LedgerEvent): void {
    this.enqueue({ line: `${JSON.stringify(event)}\n` });
  }

  clear(): void {
    this.enqueue({ clear: true });
  }

  durable(): Promise<void> {
    if (this.written >= this.appended) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => {
      this.waiters.push({ seq: this.appended, resolve, reject });
    });
    this.pump();
    return done;
  }

  async close(): Promise<void> {
    try {
      await this.durable();
    } finally {
      this.closed = true;
    }
  }

  private enqueue(item: Item): void {
    if (this.closed) throw new Error("the partner's journal is closed");
    this.queue.push(item);
    this.appended++;
    this.pump();
  }

  /** Starts writing unless a writer runs; a turn later, so the events of one call go in one append. */
  private pump(): void {
    if (this.running) return;
    this.running = true;
    queueMicrotask(() => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      for (let work = this.pending ?? this.take(); work; work = this.pending ?? this.take()) {
        this.pending = work;
        if (work.kind === "clear") await this.removeSegments();
        else await this.appendWithRetries(work);
        this.pending = undefined;
        this.written = work.lastSeq;
        this.settle();
      }
    } catch (error) {
      this.settings.logger?.error("partner.journal.failed", { error, written: this.written });
      for (const waiter of this.waiters.splice(0)) waiter.reject(error);
    } finally {
      this.running = false;
    }
  }

  /** The next work from the queue: a clear, or as many lines as one block takes. */
  private take(): Work | undefined {
    const first = this.queue[0];
    if (!first) return undefined;
    if ("clear" in first) {
      this.queue.shift();
      return { kind: "clear", lastSeq: ++this.taken };
    }
    const lines: Buffer[] = [];
    let bytes = 0;
    for (let item = this.queue[0]; item && "line" in item; item = this.queue[0]) {
      const line = Buffer.from(item.line, "utf8");
      if (lines.length > 0 && bytes + line.length > MAX_BLOCK_BYTES) break;
      lines.push(line);
      bytes += line.length;
      this.queue.shift();
    }
    if (this.segment.blocks >= this.settings.blocksPerSegment) {
      this.segment = { index: this.segment.index + 1, length: 0, blocks: 0, created: false };
      this.settings.logger?.info("partner.journal.segment", { segment: segmentName(this.segment.index) });
    }
    const segment = this.segment;
    const position = segment.length;
    segment.length += bytes;
    segment.blocks++;
    this.taken += lines.length;
    return { kind: "append", segment, position, data: Buffer.concat(lines), lastSeq: this.taken };
  }

  private settle(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i] as Waiter;
      if (waiter.seq <= this.written) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  private async appendWithRetries(work: Extract<Work, { kind: "append" }>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.appendOnce(work);
        return;
      } catch (error) {
        const wait = this.settings.retryDelaysMs[attempt];
        if (wait === undefined || error instanceof JournalConflictError) throw error;
        this.settings.logger?.warn("partner.journal.retry", {
          segment: segmentName(work.segment.index),
          position: work.position,
          attempt: attempt + 1,
          error,
        });
        await delay(wait);
      }
    }
  }

  private async appendOnce(work: Extract<Work, { kind: "append" }>): Promise<void> {
    const name = segmentName(work.segment.index);
    const blob = this.container.getAppendBlobClient(name);
    if (!work.segment.created) {
      await createSegment(blob, name);
      work.segment.created = true;
    }
    try {
      await blob.appendBlock(work.data, work.data.length, { conditions: { appendPosition: work.position } });
    } catch (error) {
      if (!(error instanceof RestError && error.statusCode === 412)) throw error;
      // Refused for its position: either this very block landed on an earlier try, or someone else wrote.
      if (!(await landed(blob, work.position, work.data))) {
        throw new JournalConflictError(
          `${name} is not ${work.position} bytes long as the partner wrote it: something else writes to its books`,
        );
      }
    }
  }

  private async removeSegments(): Promise<void> {
    for await (const blob of this.container.listBlobsFlat({ prefix: SEGMENT_PREFIX })) {
      if (SEGMENT_NAME.test(blob.name)) await this.container.getAppendBlobClient(blob.name).deleteIfExists();
    }
    this.segment = { index: 1, length: 0, blocks: 0, created: false };
  }
}

/** Creates a new, empty segment; one that exists already must be empty (its creation's answer was lost). */
async function createSegment(blob: AppendBlobClient, name: string): Promise<void> {
  try {
    await blob.create({ conditions: { ifNoneMatch: "*" } });
  } catch (error) {
    if (!(error instanceof RestError && (error.statusCode === 409 || error.statusCode === 412))) throw error;
    const length = (await blob.getProperties()).contentLength ?? 0;
    if (length !== 0) {
      throw new JournalConflictError(
        `${name} exists already with ${length} bytes: something else writes to the partner's books`,
      );
    }
  }
}

/** Whether `data` is what the blob holds at `position`, and all it holds after it. */
async function landed(blob: AppendBlobClient, position: number, data: Buffer): Promise<boolean> {
  const length = (await blob.getProperties()).contentLength ?? 0;
  if (length !== position + data.length) return false;
  return (await blob.downloadToBuffer(position, data.length)).equals(data);
}
