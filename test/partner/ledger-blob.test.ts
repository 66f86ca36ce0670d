import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import {
  type AppendBlobClient,
  type BlockBlobClient,
  type ContainerClient,
  RestError,
} from "@azure/storage-blob";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { type AzuriteBlob, freshContainer, startAzuriteBlob } from "../../laptop/stand-ins/azurite.js";
import type { LedgerEvent } from "../../partner/ledger.js";
import { type BlobLedger, openBlobLedger, segmentName, snapshotName } from "../../partner/ledger-blob.js";
import {
  PARTNER_KEY_HEADER,
  type PartnerService,
  startPartnerService,
} from "../../partner/partner-service.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

const KEY = "blob-ledger-test-key";

let azurite: AzuriteBlob;
beforeAll(async () => {
  azurite = await startAzuriteBlob();
}, 60_000);
afterAll(async () => {
  await azurite?.stop();
});

const opened: Array<{ service?: PartnerService; books: BlobLedger }> = [];
const disposals: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const { service, books } of opened.splice(0)) {
    await service?.close();
    await books.close().catch(() => {});
  }
  for (const dispose of disposals.splice(0)) await dispose();
});

function container() {
  const place = freshContainer(azurite, "partner-ledger");
  disposals.push(place.dispose);
  return place;
}

/** Counts the append blocks sent, and can lose the answer of the next one after it landed. */
function watched(inner: ContainerClient) {
  const watch = { appends: 0, loseNextAnswer: false };
  const wrap = (blob: AppendBlobClient): AppendBlobClient =>
    new Proxy(blob, {
      get(target, property, receiver) {
        if (property !== "appendBlock") return Reflect.get(target, property, receiver);
        return async (...args: Parameters<AppendBlobClient["appendBlock"]>) => {
          watch.appends++;
          const answer = await target.appendBlock(...args);
          if (watch.loseNextAnswer) {
            watch.loseNextAnswer = false;
            throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
          }
          return answer;
        };
      },
    });
  const client = new Proxy(inner, {
    get(target, property, receiver) {
      if (property !== "getAppendBlobClient") return Reflect.get(target, property, receiver);
      return (name: string) => wrap(target.getAppendBlobClient(name));
    },
  });
  return { client, watch };
}

async function open(client: ContainerClient, options: { blocksPerSegment?: number } = {}) {
  const books = await openBlobLedger(client, { retryDelaysMs: [0, 0], ...options });
  const entry: { service?: PartnerService; books: BlobLedger } = { books };
  opened.push(entry);
  return entry;
}

async function startOn(client: ContainerClient, clock: VirtualClock, faults = {}) {
  const entry = await open(client);
  entry.service = await startPartnerService({
    clock,
    logger: new MemoryLogger(),
    ledger: entry.books.ledger,
    accessKey: KEY,
    faults,
  });
  return { books: entry.books, service: entry.service, entry };
}

async function stop(entry: { service?: PartnerService; books: BlobLedger }) {
  opened.splice(opened.indexOf(entry), 1);
  await entry.service?.close();
  await entry.books.close();
}

async function call(service: PartnerService, operation: string, key: string, body: Record<string, unknown>) {
  const answer = await fetch(`${service.url}/operations/${operation}`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key, [PARTNER_KEY_HEADER]: KEY },
    body: JSON.stringify(body),
  });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

/** The lines of each journal segment (the snapshots beside them left out). */
async function segmentLines(client: ContainerClient): Promise<Record<string, number>> {
  const lines: Record<string, number> = {};
  for await (const blob of client.listBlobsFlat({ prefix: "journal-" })) {
    const text = (await client.getBlobClient(blob.name).downloadToBuffer()).toString("utf8");
    lines[blob.name] = text.split("\n").length - 1;
  }
  return lines;
}

const event = (n: number): LedgerEvent => ({
  kind: "call",
  operation: "chargePayment",
  key: `k-${n}`,
  orderId: "o",
});

describe("the partner's books in an append-blob journal", () => {
  it("keeps replays, effects, undos, refusals, control changes and a running outage across a restart", {
    timeout: 30_000,
  }, async () => {
    const place = container();
    const clock = new VirtualClock();
    const first = await startOn(place.container(), clock, { transient: 0 });
    expect(first.books.restoredEvents).toBe(0);
    const charged = await call(first.service, "chargePayment", "k-pay", { orderId: "o-1" });
    await call(first.service, "reserveInventory", "k-res", { orderId: "o-1" });
    await call(first.service, "releaseInventory", "k-rel", { orderId: "o-1", reference: "res-000001" });
    await first.service.changeFaults({ permanent: 1 });
    expect((await call(first.service, "arrangeShipment", "k-ship", { orderId: "o-1" })).status).toBe(422);
    await first.service.changeFaults({ permanent: 0 });
    await first.service.startOutage(600);
    const before = first.service.ledgerData();
    const controlBefore = first.service.control();
    await stop(first.entry);

    const second = await startOn(place.container(), clock, { transient: 0 });
    expect(second.books.restoredEvents).toBeGreaterThan(10);
    expect(second.service.ledgerData()).toEqual(before);
    expect(second.service.control()).toEqual(controlBefore);
    // Still down: the outage is in the books, and has not ended on the clock.
    expect((await call(second.service, "chargePayment", "k-pay", { orderId: "o-1" })).status).toBe(503);
    await second.service.endOutage();
    const retried = await call(second.service, "chargePayment", "k-pay", { orderId: "o-1" });
    expect(retried.body).toMatchObject({ reference: charged.body.reference, replayed: true });
    expect((await call(second.service, "arrangeShipment", "k-ship", { orderId: "o-1" })).status).toBe(422);
    expect((await call(second.service, "chargePayment", "k-2", { orderId: "o-2" })).body.reference).toBe(
      "pay-000002",
    );
    const ledger = second.service.ledger();
    expect(ledger).toMatchObject({
      effects: 3,
      undos: 1,
      duplicateEffects: 0,
      rejections: 2,
      outageRefusals: 1,
    });
    expect(second.service.control().changes.map((c) => c.change)).toEqual([
      "faults",
      "faults",
      "faults",
      "outage",
      "recovered",
    ]);

    // Replaying is idempotent: a third opening finds the same books again.
    const after = second.service.ledgerData();
    await stop(second.entry);
    const third = await open(place.container());
    expect(third.books.ledger.data()).toEqual(after);
  });

  it("writes the events of concurrent calls in fewer appends than calls (group commit)", async () => {
    const place = container();
    const { client, watch } = watched(place.container());
    const { service } = await startOn(client, new VirtualClock());
    const appendsAtStart = watch.appends;
    const calls = 20;
    const answers = await Promise.all(
      Array.from({ length: calls }, (_, i) =>
        call(service, "chargePayment", `k-${i}`, { orderId: `o-${i}` }),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const appends = watch.appends - appendsAtStart;
    expect(appends).toBeGreaterThan(0);
    expect(appends).toBeLessThan(calls);
    // Every event is in the journal: a call and an effect for each.
    expect(Object.values(await segmentLines(place.container()))).toEqual([1 + 2 * calls]);
  });

  it("writes events appended in one turn as one block, whoever awaits them", async () => {
    const place = container();
    const { client, watch } = watched(place.container());
    const { books } = await open(client);
    for (let n = 0; n < 100; n++) books.ledger.countCall("chargePayment", `k-${n}`, "o");
    await Promise.all([books.ledger.durable(), books.ledger.durable()]);
    expect(watch.appends).toBe(1);
    expect(await segmentLines(place.container())).toEqual({ [segmentName(1)]: 100 });
  });

  it("does not write an event twice when an append that landed is retried after its answer was lost", async () => {
    const place = container();
    const { client, watch } = watched(place.container());
    const first = await open(client);
    first.books.ledger.countCall("chargePayment", "k-1", "o");
    await first.books.ledger.durable();
    watch.loseNextAnswer = true;
    first.books.ledger.countCall("chargePayment", "k-2", "o");
    await first.books.ledger.durable();
    expect(watch.appends).toBe(3); // the lost answer's append, and its retry refused for its position
    first.books.ledger.countCall("chargePayment", "k-3", "o");
    await first.books.ledger.durable();
    expect(await segmentLines(place.container())).toEqual({ [segmentName(1)]: 3 });
    await stop(first);
    const reopened = await open(place.container());
    expect(reopened.books.restoredEvents).toBe(3);
    expect(reopened.books.ledger.snapshot().callsForKey("k-2")).toBe(1);
  });

  it("refuses to go on when something else appended to its segment", async () => {
    const place = container();
    const { books } = await open(place.container());
    books.ledger.countCall("chargePayment", "k-1", "o");
    await books.ledger.durable();
    const stranger = `${JSON.stringify(event(99))}\n`;
    await place.container().getAppendBlobClient(segmentName(1)).appendBlock(stranger, stranger.length);
    books.ledger.countCall("chargePayment", "k-2", "o");
    await expect(books.ledger.durable()).rejects.toThrow(/something else writes to its books/);
  });

  it("starts a new segment when one holds its limit of blocks, and replays the segments in order", async () => {
    const place = container();
    const first = await open(place.container(), { blocksPerSegment: 2 });
    for (let n = 1; n <= 5; n++) {
      first.books.ledger.countCall("chargePayment", `k-${n}`, `o-${n}`);
      await first.books.ledger.durable();
    }
    expect(await segmentLines(place.container())).toEqual({
      [segmentName(1)]: 2,
      [segmentName(2)]: 2,
      [segmentName(3)]: 1,
    });
    await stop(first);

    const second = await open(place.container(), { blocksPerSegment: 2 });
    // The books as they stood when segment 2 was sealed, and the one event of segment 3 after them.
    expect(second.books).toMatchObject({
      restoredEvents: 5,
      segments: 3,
      snapshot: snapshotName(2),
      replayedEvents: 1,
    });
    expect([...second.books.ledger.data().orderCalls.keys()]).toEqual(["o-1", "o-2", "o-3", "o-4", "o-5"]);
    second.books.ledger.countCall("chargePayment", "k-6", "o-6");
    await second.books.ledger.durable();
    expect((await segmentLines(place.container()))[segmentName(3)]).toBe(2);
  });

  it("empties the journal on reset", async () => {
    const place = container();
    const first = await open(place.container(), { blocksPerSegment: 1 });
    for (let n = 1; n <= 3; n++) {
      first.books.ledger.countCall("chargePayment", `k-${n}`, "o");
      await first.books.ledger.durable();
    }
    expect((await blobNames(place.container())).filter((name) => name.startsWith("snapshot-"))).not.toEqual(
      [],
    );
    first.books.ledger.reset();
    first.books.ledger.countCall("chargePayment", "k-after", "o");
    await first.books.ledger.durable();
    // The snapshots went with the segments: none describes books the reset forgot.
    expect(await blobNames(place.container())).toEqual([segmentName(1)]);
    await stop(first);
    expect((await open(place.container())).books.restoredEvents).toBe(1);
  });

  it("tries a failed append again at the next write and goes on once storage answers again", async () => {
    const place = container();
    const failing = { appends: 0 };
    const client = new Proxy(place.container(), {
      get(target, property, receiver) {
        if (property !== "getAppendBlobClient") return Reflect.get(target, property, receiver);
        return (name: string) =>
          new Proxy(target.getAppendBlobClient(name), {
            get(blob, member, blobReceiver) {
              if (member !== "appendBlock" || failing.appends === 0)
                return Reflect.get(blob, member, blobReceiver);
              failing.appends--;
              return async () => {
                throw new RestError("the server is busy", { statusCode: 503 });
              };
            },
          });
      },
    });
    const books = await openBlobLedger(client, { retryDelaysMs: [0] });
    const service = await startPartnerService({
      clock: new VirtualClock(),
      logger: new MemoryLogger(),
      ledger: books.ledger,
      accessKey: KEY,
      faults: {},
    });
    opened.push({ service, books });
    failing.appends = 2; // the first try and its one retry
    expect((await call(service, "chargePayment", "k-1", { orderId: "o-1" })).status).toBe(500);
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
    const retried = await call(service, "chargePayment", "k-1", { orderId: "o-1" });
    expect(retried).toMatchObject({ status: 200, body: { reference: "pay-000001", replayed: true } });
    await stop(opened.at(-1) as { service?: PartnerService; books: BlobLedger });
    const reopened = await open(place.container());
    expect(reopened.books.ledger.snapshot()).toMatchObject({ calls: 2, effects: 1 });
  });
});

/** Counts the downloads of each blob. */
function counted(inner: ContainerClient) {
  const downloads: Record<string, number> = {};
  const wrap = <T extends AppendBlobClient | BlockBlobClient>(blob: T, name: string): T =>
    new Proxy(blob, {
      get(target, property, receiver) {
        if (property !== "downloadToBuffer") return Reflect.get(target, property, receiver);
        return (...args: unknown[]) => {
          downloads[name] = (downloads[name] ?? 0) + 1;
          return (target.downloadToBuffer as (...a: unknown[]) => Promise<Buffer>)(...args);
        };
      },
    });
  const client = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === "getAppendBlobClient")
        return (name: string) => wrap(target.getAppendBlobClient(name), name);
      if (property === "getBlockBlobClient")
        return (name: string) => wrap(target.getBlockBlobClient(name), name);
      return Reflect.get(target, property, receiver);
    },
  });
  return { client, downloads };
}

/** A journal of `count` calls, one block and so one segment (and its snapshot) each. */
async function journalOfSegments(client: ContainerClient, count: number) {
  const first = await open(client, { blocksPerSegment: 1 });
  for (let n = 1; n <= count; n++) {
    first.books.ledger.countCall("chargePayment", `k-${n}`, `o-${n}`);
    await first.books.ledger.durable();
  }
  const data = first.books.ledger.data();
  await stop(first);
  return data;
}

async function blobNames(client: ContainerClient): Promise<string[]> {
  const names: string[] = [];
  for await (const blob of client.listBlobsFlat()) names.push(blob.name);
  return names;
}

async function replaceBlob(client: ContainerClient, name: string, content: string | Buffer) {
  await client.getBlobClient(name).delete();
  const data = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  await client.getBlockBlobClient(name).uploadData(data);
}

describe("F24-1: snapshots of the books beside the journal", () => {
  it("writes one at each roll-over, and a start reads the newest and only the segments after it", async () => {
    const place = container();
    const before = await journalOfSegments(place.container(), 5);
    expect(await blobNames(place.container())).toEqual([
      ...[1, 2, 3, 4, 5].map(segmentName),
      ...[1, 2, 3, 4, 5].map(snapshotName),
    ]);
    const { client, downloads } = counted(place.container());
    const reopened = await open(client, { blocksPerSegment: 1 });
    expect(reopened.books).toMatchObject({ snapshot: snapshotName(5), replayedEvents: 0, restoredEvents: 5 });
    expect(reopened.books.ledger.data()).toEqual(before);
    expect(downloads).toEqual({ [snapshotName(5)]: 1 });
    // Segment 5 is sealed: what comes next goes to segment 6.
    reopened.books.ledger.countCall("chargePayment", "k-6", "o-6");
    await reopened.books.ledger.durable();
    expect((await segmentLines(place.container()))[segmentName(6)]).toBe(1);
  });

  it("falls back to the previous snapshot when the newest is torn or missing, and to the whole journal", async () => {
    const place = container();
    const before = await journalOfSegments(place.container(), 4);
    const torn = (await place.container().getBlobClient(snapshotName(4)).downloadToBuffer()).subarray(0, -3);
    await replaceBlob(place.container(), snapshotName(4), torn);
    await place.container().getBlobClient(snapshotName(3)).delete();
    const logger = new MemoryLogger();
    const fallback = await openBlobLedger(place.container(), { retryDelaysMs: [0], logger });
    opened.push({ books: fallback });
    expect(fallback).toMatchObject({ snapshot: snapshotName(2), replayedEvents: 2, restoredEvents: 4 });
    expect(fallback.ledger.data()).toEqual(before);
    expect(logger.events("partner.journal.snapshot-skipped")).toEqual([
      expect.objectContaining({ snapshot: snapshotName(4), reason: expect.stringMatching(/is torn/) }),
    ]);
    await stop(opened.at(-1) as { books: BlobLedger });

    for (const n of [1, 2]) await replaceBlob(place.container(), snapshotName(n), "not a snapshot\n{}");
    const whole = await open(place.container());
    expect(whole.books).toMatchObject({ snapshot: null, replayedEvents: 4 });
    expect(whole.books.ledger.data()).toEqual(before);
  });

  it("skips a snapshot whose segment grew after it was sealed, or whose books are not the books' shape", async () => {
    const place = container();
    await journalOfSegments(place.container(), 3);
    const line = `${JSON.stringify(event(99))}\n`;
    await place.container().getAppendBlobClient(segmentName(3)).appendBlock(line, line.length);
    // Snapshot 2 forged whole: its header matches its body, but the books in it are not the books' shape.
    const snapshot2 = await place.container().getBlobClient(snapshotName(2)).downloadToBuffer();
    const newline = snapshot2.indexOf("\n");
    const books2 = JSON.parse(gunzipSync(snapshot2.subarray(newline + 1)).toString("utf8"));
    const alien = gzipSync(JSON.stringify({ ...books2, calls: "many" }));
    const forged = {
      ...JSON.parse(snapshot2.subarray(0, newline).toString("utf8")),
      bodyBytes: alien.length,
      sha256: createHash("sha256").update(alien).digest("hex"),
    };
    await replaceBlob(
      place.container(),
      snapshotName(2),
      Buffer.concat([Buffer.from(`${JSON.stringify(forged)}\n`), alien]),
    );
    const logger = new MemoryLogger();
    const books = await openBlobLedger(place.container(), { logger });
    opened.push({ books });
    expect(books).toMatchObject({ snapshot: snapshotName(1), replayedEvents: 3 });
    expect(
      logger.events("partner.journal.snapshot-skipped").map((line) => [line.snapshot, line.reason]),
    ).toEqual([
      [snapshotName(3), expect.stringMatching(/was \d+ bytes long, and that segment is \d+ bytes long now/)],
      [snapshotName(2), expect.stringMatching(/invalid snapshot-000002\.json: calls: /)],
    ]);
  });
});

describe("F24-7: a journal that fails", () => {
  it("after a conflict, reports unhealthy and answers nothing from books it could not write", async () => {
    const place = container();
    const failures: Error[] = [];
    const books = await openBlobLedger(place.container(), {
      retryDelaysMs: [0],
      onFailure: (error) => failures.push(error),
    });
    const service = await startPartnerService({
      clock: new VirtualClock(),
      logger: new MemoryLogger(),
      ledger: books.ledger,
      accessKey: KEY,
      faults: {},
    });
    opened.push({ service, books });
    expect((await call(service, "chargePayment", "k-1", { orderId: "o-1" })).status).toBe(200);
    const stranger = `${JSON.stringify(event(99))}\n`;
    await place.container().getAppendBlobClient(segmentName(1)).appendBlock(stranger, stranger.length);

    // Applied in memory, but never durable: not answered.
    expect((await call(service, "chargePayment", "k-2", { orderId: "o-2" })).status).toBe(500);
    const health = await fetch(`${service.url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({
      status: "unhealthy",
      reason: expect.stringMatching(/journal-000001\.jsonl .*something else writes to its books/),
    });
    // The retry finds k-2 applied in memory; it is refused, not answered from there.
    const retried = await call(service, "chargePayment", "k-2", { orderId: "o-2" });
    expect(retried).toMatchObject({ status: 503, body: { error: "books-unavailable" } });
    expect((await call(service, "chargePayment", "k-1", { orderId: "o-1" })).status).toBe(503);
    expect(failures).toHaveLength(1);
    await expect(books.ledger.durable()).rejects.toThrow(/something else writes/);
  });
});

describe("F24-10: what the journal reads back is checked before it is believed", () => {
  async function openWith(lines: string[]) {
    const place = container();
    await place.container().createIfNotExists();
    const blob = place.container().getAppendBlobClient(segmentName(1));
    await blob.create();
    const text = lines.map((line) => `${line}\n`).join("");
    await blob.appendBlock(text, Buffer.byteLength(text));
    return openBlobLedger(place.container());
  }

  it("refuses an event of the wrong shape, naming the segment, the line and the field", async () => {
    const call1 = JSON.stringify(event(1));
    await expect(
      openWith([
        call1,
        JSON.stringify({ kind: "effect", key: "k", operation: "chargePayment", orderId: "o" }),
      ]),
    ).rejects.toThrow(/^invalid journal-000001\.jsonl line 2: at: /);
    await expect(openWith([call1, call1, JSON.stringify({ kind: "refund", key: "k" })])).rejects.toThrow(
      /^invalid journal-000001\.jsonl line 3: kind: /,
    );
    await expect(openWith([JSON.stringify({ ...event(1), operation: "teleport" })])).rejects.toThrow(
      /^invalid journal-000001\.jsonl line 1: operation: /,
    );
    await expect(openWith(["{not json"])).rejects.toThrow(
      /^invalid journal-000001\.jsonl line 1: \(event\): /,
    );
  });
});
