/**
 * The writer of the partner's append-blob journal (ledger-blob.ts says what the container holds).
 *
 * - Group commit: events are buffered and written by one append per flush; whatever arrives while an
 *   append is under way goes into the next one, so concurrent calls share their appends.
 * - Every append carries the append-position condition (the length the segment must have). An append
 *   retried after its answer was lost is then refused 412 instead of written twice; the journal checks
 *   by the segment's length and the bytes at that position that it did land.
 * - Roll-over: once a segment holds `eventsPerSegment` events or `blocksPerSegment` blocks, the books are
 *   taken as they stand after the last event queued (a marker in the queue, so nothing queued later is in
 *   them), the segment is sealed when the marker's turn comes, the next one is started, and the books are
 *   written beside the journal as that segment's snapshot (ledger-snapshot.ts), in the background.
 * - A conflict (something else wrote to the segments) fails the journal for good: the books in memory may
 *   then hold changes no one will ever read back, so it takes no more events, every wait on it is refused,
 *   and `failure()` says why (the partner's /health then answers 503). Any other failed append is kept and
 *   tried again, unchanged and first, at the next event or wait: the position condition makes that safe.
 */
import { setTimeout as delay } from "node:timers/promises";
import { type AppendBlobClient, type ContainerClient, RestError } from "@azure/storage-blob";
import type { Logger } from "../src/ports/logger.js";
import type { LedgerEvent, LedgerJournal } from "./ledger.js";
import { SNAPSHOT_PREFIX, snapshotName, writeSnapshot } from "./ledger-snapshot.js";
import type { LedgerState } from "./ledger-state.js";

/** The largest append block the blob service takes. */
const MAX_BLOCK_BYTES = 4 * 1024 * 1024;
export const SEGMENT_PREFIX = "journal-";
export const SEGMENT_NAME = /^journal-(\d{6,})\.jsonl$/;

export function segmentName(index: number): string {
  return `${SEGMENT_PREFIX}${String(index).padStart(6, "0")}.jsonl`;
}

/** Something else wrote to the journal's segments: the partner cannot tell what its books hold. */
export class JournalConflictError extends Error {
  override readonly name = "JournalConflictError";
}

/** The segment being written. */
export interface Segment {
  readonly index: number;
  /** Bytes written or reserved by a block taken for writing. */
  length: number;
  blocks: number;
  created: boolean;
}

export interface JournalSettings {
  readonly blocksPerSegment: number;
  readonly eventsPerSegment: number;
  readonly retryDelaysMs: readonly number[];
  readonly logger?: Logger;
  /** Called once, when a conflict fails the journal for good. */
  readonly onFailure?: (error: Error) => void;
}

/** Where the writer starts: the segment to append to, the events it holds already, and in the whole journal. */
export interface JournalStart {
  readonly segment: Segment;
  readonly segmentEvents: number;
  readonly events: number;
}

interface Roll {
  /** The books after every event queued before the marker, as JSON; undefined when there is no one to ask. */
  readonly body: string | undefined;
  readonly events: number;
}

type Item = { readonly line: string } | { readonly clear: true } | { readonly roll: Roll };

type Append = {
  readonly kind: "append";
  readonly segment: Segment;
  readonly position: number;
  readonly data: Buffer;
  readonly lastSeq: number;
};
type Work =
  | Append
  | { readonly kind: "clear"; readonly lastSeq: number }
  | { readonly kind: "roll"; readonly roll: Roll; readonly lastSeq: number };

interface Waiter {
  readonly seq: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class BlobJournal implements LedgerJournal {
  private readonly queue: Item[] = [];
  private readonly waiters: Waiter[] = [];
  /** Events and clears appended, taken for writing, and written, counted from the start (roll markers are not). */
  private appended = 0;
  private taken = 0;
  private written = 0;
  /** Taken but not written: retried, unchanged, before anything else. */
  private pending: Work | undefined;
  private running = false;
  private closed = false;
  private failedWith: Error | undefined;
  private segment: Segment;
  /** Events queued for the current segment since it was started (or since the marker that ends it). */
  private segmentEvents: number;
  /** Events in the journal, counting those queued. */
  private events: number;
  private rollRequested = false;
  private books: (() => LedgerState) | undefined;
  /** The snapshot writes, one after another; never rejects. */
  private snapshots: Promise<void> = Promise.resolve();

  constructor(
    private readonly container: ContainerClient,
    start: JournalStart,
    private readonly settings: JournalSettings,
  ) {
    this.segment = start.segment;
    this.segmentEvents = start.segmentEvents;
    this.events = start.events;
  }

  /** Where a roll-over takes the books from: the ledger this journal keeps. */
  snapshotsOf(books: () => LedgerState): void {
    this.books = books;
  }

  append(event: LedgerEvent): void {
    this.enqueue({ line: `${JSON.stringify(event)}\n` });
    this.events++;
    if (++this.segmentEvents >= this.settings.eventsPerSegment) this.requestRoll();
  }

  clear(): void {
    this.enqueue({ clear: true });
    this.events = 0;
    this.segmentEvents = 0;
  }

  durable(): Promise<void> {
    if (this.failedWith) return Promise.reject(this.failedWith);
    if (this.written >= this.appended) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => {
      this.waiters.push({ seq: this.appended, resolve, reject });
    });
    this.pump();
    return done;
  }

  failure(): Error | undefined {
    return this.failedWith;
  }

  /** Writes what is buffered and lets a snapshot being written finish, then takes no more events. */
  async close(): Promise<void> {
    try {
      await this.durable();
    } finally {
      this.closed = true;
      await this.snapshots;
    }
  }

  private enqueue(item: Item): void {
    if (this.failedWith) throw this.failedWith;
    if (this.closed) throw new Error("the partner's journal is closed");
    this.queue.push(item);
    if (!("roll" in item)) this.appended++;
    this.pump();
  }

  /**
   * Queues a roll-over marker a turn later: never inside a change to the books (their journal is asked
   * to append before the change is made), so the books taken then hold exactly the events queued.
   */
  private requestRoll(): void {
    if (this.rollRequested) return;
    this.rollRequested = true;
    queueMicrotask(() => {
      this.rollRequested = false;
      if (this.closed || this.failedWith) return;
      this.enqueue({ roll: { body: this.booksNow(), events: this.events } });
      this.segmentEvents = 0;
    });
  }

  /** The books as JSON, or undefined (the segment is then sealed without a snapshot) if they cannot be taken. */
  private booksNow(): string | undefined {
    try {
      return this.books ? JSON.stringify(this.books()) : undefined;
    } catch (error) {
      this.settings.logger?.warn("partner.journal.snapshot-failed", {
        segment: segmentName(this.segment.index),
        error,
      });
      return undefined;
    }
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
        if (work.kind === "clear") await this.removeAll();
        else if (work.kind === "roll") this.roll(work.roll);
        else await this.appendWithRetries(work);
        this.pending = undefined;
        this.written = work.lastSeq;
        this.settle();
      }
    } catch (error) {
      if (error instanceof JournalConflictError) this.fail(error);
      this.settings.logger?.error("partner.journal.failed", {
        error,
        written: this.written,
        forGood: this.failedWith !== undefined,
      });
      for (const waiter of this.waiters.splice(0)) waiter.reject(error);
    } finally {
      this.running = false;
    }
  }

  private fail(error: JournalConflictError): void {
    this.failedWith = error;
    this.queue.length = 0;
    this.pending = undefined;
    this.settings.onFailure?.(error);
  }

  /** The next work from the queue: a clear, a roll-over, or as many lines as one block takes. */
  private take(): Work | undefined {
    const first = this.queue[0];
    if (!first) return undefined;
    if ("clear" in first || "roll" in first) {
      this.queue.shift();
      return "clear" in first
        ? { kind: "clear", lastSeq: ++this.taken }
        : { kind: "roll", roll: first.roll, lastSeq: this.taken };
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
    // Full before its roll-over marker came (more than a block was queued ahead of it): sealed without one.
    if (this.segment.blocks >= this.settings.blocksPerSegment) this.startSegment(this.segment.index + 1);
    const segment = this.segment;
    const position = segment.length;
    segment.length += bytes;
    if (++segment.blocks >= this.settings.blocksPerSegment) this.requestRoll();
    this.taken += lines.length;
    return { kind: "append", segment, position, data: Buffer.concat(lines), lastSeq: this.taken };
  }

  private startSegment(index: number): void {
    this.segment = { index, length: 0, blocks: 0, created: false };
    this.settings.logger?.info("partner.journal.segment", { segment: segmentName(index) });
  }

  /** Seals the segment (every event before the marker is in it) and writes the books as its snapshot. */
  private roll(roll: Roll): void {
    const sealed = this.segment;
    if (sealed.blocks === 0) return; // nothing in it since the last roll-over: nothing to seal
    this.startSegment(sealed.index + 1);
    const { body } = roll;
    if (body === undefined) return;
    const snapshot = { segment: sealed.index, segmentLength: sealed.length, events: roll.events, body };
    const name = snapshotName(sealed.index);
    this.snapshots = this.snapshots
      .then(() => writeSnapshot(this.container, snapshot))
      .then(
        (outcome) =>
          this.settings.logger?.info("partner.journal.snapshot", {
            snapshot: name,
            events: roll.events,
            outcome,
          }),
        // The journal holds every event still: a start falls back to an older snapshot and more segments.
        (error: unknown) =>
          this.settings.logger?.warn("partner.journal.snapshot-failed", { snapshot: name, error }),
      );
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

  private async appendWithRetries(work: Append): Promise<void> {
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

  private async appendOnce(work: Append): Promise<void> {
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

  /**
   * Empties the container: the snapshots first, then the segments, newest first, so that a crash half way
   * leaves an older journal whole rather than a newer one with its start missing.
   */
  private async removeAll(): Promise<void> {
    await this.snapshots; // one being written lands before it is removed, not after
    const snapshots: string[] = [];
    const segments: string[] = [];
    for await (const blob of this.container.listBlobsFlat()) {
      if (blob.name.startsWith(SNAPSHOT_PREFIX)) snapshots.push(blob.name);
      else if (SEGMENT_NAME.test(blob.name)) segments.push(blob.name);
    }
    for (const name of [...snapshots.sort().reverse(), ...segments.sort().reverse()]) {
      await this.container.getBlobClient(name).deleteIfExists();
    }
    this.startSegment(1);
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
