/**
 * Snapshots of the partner's books beside its journal (ledger-blob.ts): `snapshot-000007.json` holds the
 * books as they stood at the end of segment `journal-000007.jsonl`, which was sealed then (the journal
 * went on in the next segment). A start reads the newest snapshot that checks out and replays only the
 * segments after it.
 *
 * A snapshot is a block blob written once, only if none of its name exists (If-None-Match: *): never
 * overwritten, so a retried or late write cannot replace one already read. It is believed only when
 *
 * - its first line, a header, names its own format and version, and the length and SHA-256 of the rest;
 * - the rest is the books, gzipped JSON, in the shape ledger-schema.ts checks;
 * - the segment it ends at is still exactly as long as when it was sealed (nothing was appended after).
 *
 * Anything else (a torn or foreign blob, a segment that grew) is skipped with a warning naming it, and the
 * next older snapshot is tried, down to replaying the whole journal: the segments are never deleted.
 */
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { type ContainerClient, RestError } from "@azure/storage-blob";
import { z } from "zod";
import { parseState } from "./ledger-schema.js";
import type { LedgerState } from "./ledger-state.js";

// zlib's callback forms run on libuv's threads, off the partner's event loop.
const gzipped = promisify(gzip);
const gunzipped = promisify(gunzip);

export const SNAPSHOT_PREFIX = "snapshot-";
const SNAPSHOT_NAME = /^snapshot-(\d{6,})\.json$/;
const FORMAT = "partner-ledger-snapshot";
const HEADER_VERSION = 1;

export function snapshotName(segment: number): string {
  return `${SNAPSHOT_PREFIX}${String(segment).padStart(6, "0")}.json`;
}

/** The segment a snapshot blob's name says it ends at, or undefined for another name. */
export function snapshotSegment(name: string): number | undefined {
  const match = SNAPSHOT_NAME.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** What a snapshot says of itself in its first line. */
export interface SnapshotHeader {
  readonly format: typeof FORMAT;
  readonly version: typeof HEADER_VERSION;
  /** The last segment whose events it holds; it was sealed at `segmentLength` bytes. */
  readonly segment: number;
  readonly segmentLength: number;
  /** Events journaled up to the end of that segment (since the books were last reset). */
  readonly events: number;
  readonly bodyBytes: number;
  readonly sha256: string;
}

export interface SnapshotOfBooks {
  readonly segment: number;
  readonly segmentLength: number;
  readonly events: number;
  /** The books, `JSON.stringify(ledger.state())`, taken when the events up to the end of `segment` were all it held. */
  readonly body: string;
}

/** A snapshot read back and checked: the books, and what its header says. */
export interface ReadSnapshot {
  readonly name: string;
  readonly header: SnapshotHeader;
  readonly state: LedgerState;
}

/** The blob of `snapshot`: its header line, then the books gzipped (a tenth of their size as JSON). */
export async function encodeSnapshot(snapshot: SnapshotOfBooks): Promise<Buffer> {
  const body = await gzipped(Buffer.from(snapshot.body, "utf8"));
  const header: SnapshotHeader = {
    format: FORMAT,
    version: HEADER_VERSION,
    segment: snapshot.segment,
    segmentLength: snapshot.segmentLength,
    events: snapshot.events,
    bodyBytes: body.length,
    sha256: createHash("sha256").update(body).digest("hex"),
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, "utf8"), body]);
}

/** Writes `snapshot` unless a blob of its name exists: "existed" then (an earlier try landed, say). */
export async function writeSnapshot(
  container: ContainerClient,
  snapshot: SnapshotOfBooks,
): Promise<"written" | "existed"> {
  const data = await encodeSnapshot(snapshot);
  const blob = container.getBlockBlobClient(snapshotName(snapshot.segment));
  try {
    await blob.uploadData(data, {
      conditions: { ifNoneMatch: "*" },
      blobHTTPHeaders: { blobContentType: "application/octet-stream" },
    });
    return "written";
  } catch (error) {
    if (error instanceof RestError && (error.statusCode === 409 || error.statusCode === 412))
      return "existed";
    throw error;
  }
}

/** A snapshot that cannot be believed, and why. */
export class SnapshotRefused extends Error {
  override readonly name = "SnapshotRefused";
}

/**
 * Reads snapshot `name` and checks it against its own header and against `sealedLength`, the length its
 * segment has now (undefined when that segment is missing); a SnapshotRefused says what is wrong.
 */
export async function readSnapshot(
  container: ContainerClient,
  name: string,
  sealedLength: number | undefined,
): Promise<ReadSnapshot> {
  const data = await container.getBlockBlobClient(name).downloadToBuffer();
  const newline = data.indexOf(0x0a);
  const header = newline < 0 ? undefined : headerOf(data.subarray(0, newline).toString("utf8"));
  if (!header) throw new SnapshotRefused(`${name} does not start with a snapshot header`);
  const body = data.subarray(newline + 1);
  const digest = createHash("sha256").update(body).digest("hex");
  if (body.length !== header.bodyBytes || digest !== header.sha256) {
    throw new SnapshotRefused(
      `${name} is torn: ${body.length} bytes after its header, SHA-256 ${digest}; the header says ${header.bodyBytes} bytes, ${header.sha256}`,
    );
  }
  if (header.segment !== snapshotSegment(name)) {
    throw new SnapshotRefused(`${name} says it ends at segment ${header.segment}`);
  }
  if (sealedLength !== header.segmentLength) {
    const now = sealedLength === undefined ? "is missing" : `is ${sealedLength} bytes long`;
    throw new SnapshotRefused(
      `${name} ends at segment ${header.segment} when it was ${header.segmentLength} bytes long, and that segment ${now} now`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse((await gunzipped(body)).toString("utf8"));
  } catch (error) {
    throw new SnapshotRefused(`${name} does not hold gzipped JSON: ${(error as Error).message}`);
  }
  try {
    return { name, header, state: parseState(name, value) };
  } catch (error) {
    throw new SnapshotRefused((error as Error).message);
  }
}

const wholeNumber = z.number().int().nonnegative();
const headerSchema = z.strictObject({
  format: z.literal(FORMAT),
  version: z.literal(HEADER_VERSION),
  segment: wholeNumber,
  segmentLength: wholeNumber,
  events: wholeNumber,
  bodyBytes: wholeNumber,
  sha256: z.string(),
}) satisfies z.ZodType<SnapshotHeader>;

function headerOf(line: string): SnapshotHeader | undefined {
  try {
    const parsed = headerSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // not JSON: not a header
  }
}
