/**
 * F24-1: the partner's books once their history is long. A start must open a journal of half a million
 * events (one segment of them all included), and read a snapshot rather than the whole history. Each test
 * reports how long the opening took, on Azurite: `npx vitest run test/partner/ledger-blob-startup.test.ts`.
 */
import { performance } from "node:perf_hooks";
import type { ContainerClient } from "@azure/storage-blob";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AzuriteBlob, freshContainer, startAzuriteBlob } from "../../laptop/stand-ins/azurite.js";
import type { Ledger, LedgerEvent } from "../../partner/ledger.js";
import { type BlobLedger, openBlobLedger, segmentName, snapshotName } from "../../partner/ledger-blob.js";
import { EFFECT_OPERATIONS } from "../../src/domain/partner-operations.js";

const EVENTS = 500_000;
/** The done-when figure of F24-1. */
const START_BUDGET_MS = 10_000;

let azurite: AzuriteBlob;
beforeAll(async () => {
  azurite = await startAzuriteBlob();
}, 60_000);
afterAll(async () => {
  await azurite?.stop();
});

const opened: BlobLedger[] = [];
const disposals: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const books of opened.splice(0)) await books.close().catch(() => {});
  for (const dispose of disposals.splice(0)) await dispose();
});

function container() {
  const place = freshContainer(azurite, "partner-ledger");
  disposals.push(place.dispose);
  return place;
}

async function timedOpen(client: ContainerClient): Promise<{ books: BlobLedger; ms: number }> {
  const started = performance.now();
  const books = await openBlobLedger(client);
  const ms = performance.now() - started;
  opened.push(books);
  return { books, ms };
}

/** Order `n`'s four steps, each a call and its effect: eight events. */
function order(ledger: Ledger, n: number): void {
  const orderId = `ord-${String(n).padStart(7, "0")}`;
  for (const operation of EFFECT_OPERATIONS) {
    const key = `${orderId}:${operation}`;
    ledger.countCall(operation, key, orderId);
    ledger.applyEffect(key, operation, orderId, new Date(Date.UTC(2026, 0, 1) + n * 1000));
  }
}

/** Journal lines as the partner writes them: a call and an effect per step of each order. */
function* journalLines(count: number): Generator<string> {
  for (let i = 0; i < count; i++) {
    const n = Math.floor(i / 2);
    const orderId = `ord-${String(Math.floor(n / 4)).padStart(7, "0")}`;
    const operation = EFFECT_OPERATIONS[n % 4] ?? "chargePayment";
    const key = `${orderId}:${operation}`;
    const event: LedgerEvent =
      i % 2 === 0
        ? { kind: "call", operation, key, orderId }
        : {
            kind: "effect",
            key,
            operation,
            orderId,
            at: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
          };
    yield `${JSON.stringify(event)}\n`;
  }
}

/** Writes `count` events into one segment, in blocks of up to 4 MiB, as a partner that never rolled over would. */
async function writeOneSegment(client: ContainerClient, count: number): Promise<void> {
  await client.createIfNotExists();
  const blob = client.getAppendBlobClient(segmentName(1));
  await blob.create();
  let block: string[] = [];
  let bytes = 0;
  const flush = async () => {
    const data = Buffer.from(block.join(""), "utf8");
    await blob.appendBlock(data, data.length);
    block = [];
    bytes = 0;
  };
  for (const line of journalLines(count)) {
    if (bytes + line.length > 4 * 1024 * 1024) await flush();
    block.push(line);
    bytes += line.length;
  }
  if (block.length > 0) await flush();
}

describe("F24-1: the partner's books with a long history", () => {
  it(`opens a journal of ${EVENTS.toLocaleString("en-US")} events in one segment, with no snapshot`, {
    timeout: 180_000,
  }, async () => {
    const place = container();
    await writeOneSegment(place.container(), EVENTS);
    const { books, ms } = await timedOpen(place.container());
    console.info(`F24-1: ${EVENTS} events in one segment, no snapshot: opened in ${Math.round(ms)} ms`);
    expect(books).toMatchObject({
      restoredEvents: EVENTS,
      replayedEvents: EVENTS,
      snapshot: null,
      segments: 1,
    });
    expect(books.ledger.snapshot()).toMatchObject({
      calls: EVENTS / 2,
      effects: EVENTS / 2,
      duplicateEffects: 0,
    });
  });

  it(`starts from a snapshot in under ${START_BUDGET_MS / 1000} s: ${EVENTS.toLocaleString("en-US")} events and more, journaled by the partner`, {
    timeout: 300_000,
  }, async () => {
    const place = container();
    const writer = await openBlobLedger(place.container());
    // 66,500 orders of eight events, in group commits of a thousand orders: 532,000 events.
    const orders = 66_500;
    for (let n = 0; n < orders; n++) {
      order(writer.ledger, n);
      if (n % 1_000 === 999 || n === orders - 1) await writer.ledger.durable();
    }
    const before = writer.ledger.data();
    await writer.close();

    const { books, ms } = await timedOpen(place.container());
    console.info(
      `F24-1: ${orders * 8} events, from ${books.snapshot} and the ${books.replayedEvents} events after it: started in ${Math.round(ms)} ms`,
    );
    // A segment rolls over once it holds 100,000 events (here a commit more): the books were snapshotted at
    // each roll-over, and the start read the last snapshot and the one segment after it.
    expect(books.restoredEvents).toBe(orders * 8);
    expect(books.segments).toBeGreaterThanOrEqual(6);
    expect(books.snapshot).toBe(snapshotName(books.segments - 1));
    expect(books.replayedEvents).toBeGreaterThan(0);
    expect(books.replayedEvents).toBeLessThan(100_000 + 8_000);
    expect(books.ledger.data()).toEqual(before);
    expect(ms).toBeLessThan(START_BUDGET_MS);
  });
});
