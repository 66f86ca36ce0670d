/**
 * The partner's books in Azure Storage, in a container of their own:
 *
 * - a journal of append blobs, `journal-000001.jsonl`, `journal-000002.jsonl`, ..., one JSON event a
 *   line, written by one writer (ledger-blob-journal.ts);
 * - snapshots, `snapshot-000001.json`, ...: the books as they stood when a segment was sealed
 *   (ledger-snapshot.ts).
 *
 * Opening reads the newest snapshot that checks out and replays the segments after it (every segment
 * when there is none), each event checked before it is believed (ledger-schema.ts). So a start reads the
 * books and at most the last segment or two, whatever the length of the history.
 *
 * One writer only (the partner runs as a single instance): anything else appending to the segments
 * shows up as a length the journal did not expect, which it refuses as a conflict.
 */
import type { TokenCredential } from "@azure/identity";
import { BlobServiceClient, ContainerClient } from "@azure/storage-blob";
import { azureCredential } from "../src/adapters/azure-credential.js";
import type { Logger } from "../src/ports/logger.js";
import { Ledger, type LedgerEvent } from "./ledger.js";
import {
  BlobJournal,
  JournalConflictError,
  type JournalStart,
  SEGMENT_NAME,
  segmentName,
} from "./ledger-blob-journal.js";
import { parseEvent } from "./ledger-schema.js";
import {
  type ReadSnapshot,
  readSnapshot,
  SnapshotRefused,
  snapshotName,
  snapshotSegment,
} from "./ledger-snapshot.js";

export { JournalConflictError, segmentName } from "./ledger-blob-journal.js";
export { snapshotName };

/** The most blocks an append blob takes. */
export const SEGMENT_BLOCK_LIMIT = 50_000;
/** Events a segment takes before the books are snapshotted and the next segment started. */
export const SEGMENT_EVENTS = 100_000;
const DEFAULT_RETRY_DELAYS_MS = [200, 1_000, 5_000];

/** Where the journal's container is: a URL reached with the managed identity, or a connection string. */
export type LedgerContainerPlace =
  | { readonly kind: "containerUrl"; readonly url: string; readonly clientId?: string }
  | { readonly kind: "connectionString"; readonly connectionString: string; readonly container: string };

/** `credential` replaces the site's managed identity (azure-credential.ts) for a container URL (tests, other hosts). */
export function ledgerContainer(place: LedgerContainerPlace, credential?: TokenCredential): ContainerClient {
  if (place.kind === "connectionString") {
    return BlobServiceClient.fromConnectionString(place.connectionString).getContainerClient(place.container);
  }
  const identity = credential ?? azureCredential(process.env, place.clientId);
  return new ContainerClient(place.url, identity);
}

export interface BlobLedgerOptions {
  /** Blocks a segment takes before the next one is started (default and most: 50,000). */
  readonly blocksPerSegment?: number;
  /** Events a segment takes before the books are snapshotted and the next one started (default 100,000). */
  readonly eventsPerSegment?: number;
  /** The waits before each retry of a failed append (default 200 ms, 1 s, 5 s). */
  readonly retryDelaysMs?: readonly number[];
  readonly logger?: Logger;
  /** Called once if a conflict fails the journal for good (see `Ledger.journalFailure`). */
  readonly onFailure?: (error: Error) => void;
}

/** The partner's books on append blobs. */
export interface BlobLedger {
  readonly ledger: Ledger;
  /** Events the books hold when the journal was opened (the snapshot's and those replayed): 0 for a new one. */
  readonly restoredEvents: number;
  /** Events replayed from the segments after the snapshot (all of them without one). */
  readonly replayedEvents: number;
  /** The snapshot the books were read from, or null when every segment was replayed. */
  readonly snapshot: string | null;
  /** Segments found when the journal was opened. */
  readonly segments: number;
  /** Writes what is still buffered, then takes no more events. */
  close(): Promise<void>;
}

/** Opens (creating the container if needed) the journal in `container`, and rebuilds the books from it. */
export async function openBlobLedger(
  container: ContainerClient,
  options: BlobLedgerOptions = {},
): Promise<BlobLedger> {
  const blocksPerSegment = wholeOption(
    "blocksPerSegment",
    options.blocksPerSegment,
    SEGMENT_BLOCK_LIMIT,
    SEGMENT_BLOCK_LIMIT,
  );
  const eventsPerSegment = wholeOption(
    "eventsPerSegment",
    options.eventsPerSegment,
    SEGMENT_EVENTS,
    Number.MAX_SAFE_INTEGER,
  );
  await container.createIfNotExists();
  const contents = await listContents(container);
  const base = await newestSnapshot(container, contents, options.logger);
  const tail = await readTail(container, contents, base);
  const journal = new BlobJournal(container, tail.start, {
    blocksPerSegment,
    eventsPerSegment,
    retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onFailure ? { onFailure: options.onFailure } : {}),
  });
  const ledger = Ledger.restore(base?.state, tail.events, journal);
  journal.snapshotsOf(() => ledger.state());
  return {
    ledger,
    restoredEvents: tail.start.events,
    replayedEvents: tail.events.length,
    snapshot: base?.name ?? null,
    segments: contents.segments.size,
    close: () => journal.close(),
  };
}

function wholeOption(name: string, value: number | undefined, fallback: number, max: number): number {
  const chosen = value ?? fallback;
  if (!Number.isSafeInteger(chosen) || chosen < 1 || chosen > max) {
    throw new RangeError(`${name} must be a whole number from 1 to ${max}, got ${chosen}`);
  }
  return chosen;
}

/** What the container holds: each segment's length by its number, and the snapshots' segments. */
interface Contents {
  readonly segments: ReadonlyMap<number, number>;
  readonly snapshots: readonly number[];
}

async function listContents(container: ContainerClient): Promise<Contents> {
  const segments = new Map<number, number>();
  const snapshots: number[] = [];
  for await (const blob of container.listBlobsFlat()) {
    const segment = SEGMENT_NAME.exec(blob.name);
    if (segment) segments.set(Number(segment[1]), blob.properties.contentLength ?? 0);
    const snapshot = snapshotSegment(blob.name);
    if (snapshot !== undefined) snapshots.push(snapshot);
  }
  return { segments, snapshots: snapshots.sort((a, b) => b - a) };
}

/** The newest snapshot that checks out, or undefined; each one refused is logged with its reason. */
async function newestSnapshot(
  container: ContainerClient,
  contents: Contents,
  logger: Logger | undefined,
): Promise<ReadSnapshot | undefined> {
  for (const segment of contents.snapshots) {
    const name = snapshotName(segment);
    try {
      return await readSnapshot(container, name, contents.segments.get(segment));
    } catch (error) {
      if (!(error instanceof SnapshotRefused)) throw error;
      logger?.warn("partner.journal.snapshot-skipped", { snapshot: name, reason: error.message });
    }
  }
  return undefined;
}

/** The events of the segments after `base` (all of them without one), and where the writer goes on. */
async function readTail(
  container: ContainerClient,
  contents: Contents,
  base: ReadSnapshot | undefined,
): Promise<{ events: LedgerEvent[]; start: JournalStart }> {
  const first = base ? base.header.segment + 1 : 1;
  let last = first - 1;
  for (const index of contents.segments.keys()) last = Math.max(last, index);
  const events: LedgerEvent[] = [];
  // After a snapshot with nothing journaled since, the writer starts the next segment: the one the
  // snapshot ends at is sealed.
  let start: JournalStart = {
    segment: { index: first, length: 0, blocks: 0, created: false },
    segmentEvents: 0,
    events: base?.header.events ?? 0,
  };
  for (let index = first; index <= last; index++) {
    const name = segmentName(index);
    if (!contents.segments.has(index)) {
      throw new JournalConflictError(
        `${name} is missing, though the journal goes on to ${segmentName(last)}`,
      );
    }
    const blob = container.getAppendBlobClient(name);
    const properties = await blob.getProperties();
    const length = properties.contentLength ?? 0;
    const text = length > 0 ? (await blob.downloadToBuffer(0, length)).toString("utf8") : "";
    const before = events.length;
    parseSegment(name, text, events);
    start = {
      segment: { index, length, blocks: properties.blobCommittedBlockCount ?? 0, created: true },
      segmentEvents: events.length - before,
      events: start.events + events.length - before,
    };
  }
  return { events, start };
}

/** Appends the events of segment `name` to `events`, one by one: a segment may hold millions. */
function parseSegment(name: string, text: string, events: LedgerEvent[]): void {
  if (text !== "" && !text.endsWith("\n")) {
    throw new JournalConflictError(
      `${name} does not end with a whole line: it was not written by the partner`,
    );
  }
  let lineNumber = 0;
  for (let from = 0; from < text.length; ) {
    const end = text.indexOf("\n", from);
    events.push(parseEvent(`${name} line ${++lineNumber}`, text.slice(from, end)));
    from = end + 1;
  }
}
