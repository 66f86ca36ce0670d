import type { AppendBlobClient, ContainerClient } from "@azure/storage-blob";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { type AzuriteBlob, freshContainer, startAzuriteBlob } from "../../laptop/stand-ins/azurite.js";
import type { LedgerEvent } from "../../partner/ledger.js";
import { type BlobLedger, openBlobLedger, segmentName } from "../../partner/ledger-blob.js";
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

async function segmentLines(client: ContainerClient): Promise<Record<string, number>> {
  const lines: Record<string, number> = {};
  for await (const blob of client.listBlobsFlat()) {
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
    expect(second.books).toMatchObject({ restoredEvents: 5, segments: 3 });
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
    first.books.ledger.reset();
    first.books.ledger.countCall("chargePayment", "k-after", "o");
    await first.books.ledger.durable();
    expect(await segmentLines(place.container())).toEqual({ [segmentName(1)]: 1 });
    await stop(first);
    expect((await open(place.container())).books.restoredEvents).toBe(1);
  });
});
