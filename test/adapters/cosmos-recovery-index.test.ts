/**
 * The Cosmos DB store's recovery index (docs/recovery-index.md) under the failures the state-store
 * contract cannot reach through the port: writes that lose a race or die between the entry and the
 * record, entries left stale or early, and the Supervisor's repairs of them while it pages.
 */
import type { Container, CosmosClient } from "@azure/cosmos";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type CosmosStandIn, startCosmosServer } from "../../laptop/stand-ins/cosmos-server.js";
import {
  createCosmosClient,
  ensureStateContainers,
  type StateContainers,
} from "../../src/adapters/cosmos/cosmos-client.js";
import { CosmosStateStore } from "../../src/adapters/cosmos/cosmos-state-store.js";
import { indexedDeadline } from "../../src/adapters/cosmos/recovery-index.js";
import type { StateRecord, StoredStateRecord } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { pendingRecord, T0 } from "../support/records.js";

const at = (ms: number) => addMilliseconds(T0, ms);

let server: CosmosStandIn;
let client: CosmosClient;
let databases = 0;

beforeAll(async () => {
  server = await startCosmosServer();
  client = createCosmosClient(server.connection);
});

afterAll(async () => {
  client?.dispose();
  await server?.stop();
});

/**
 * Which of the next item writes (replace, delete) of each container fail, in order: `true` makes one
 * throw before it reaches the store, as a crash or a lost connection would.
 */
interface Faults {
  readonly records: boolean[];
  readonly entries: boolean[];
  /** Milliseconds each item write waits before it is sent: widens the windows between requests. */
  latencyMs: () => number;
  /** Awaited once, by the next write of each container, before it is sent. */
  readonly hold: { records?: (() => Promise<void>) | undefined; entries?: (() => Promise<void>) | undefined };
}

let containers: StateContainers;
let faults: Faults;
let store: CosmosStateStore;

beforeEach(async () => {
  containers = await ensureStateContainers(client, `recovery-${++databases}`);
  faults = { records: [], entries: [], latencyMs: () => 0, hold: {} };
  store = new CosmosStateStore({
    records: failing(containers.records, "records"),
    recovery: failing(containers.recovery, "entries"),
  });
});

afterEach(async () => {
  await containers.records.database.delete();
});

/** The container, whose item writes (create, replace, delete) fail or wait as `faults` says. */
function failing(container: Container, kind: keyof Faults["hold"]): Container {
  const faulty =
    <F extends (...args: never[]) => Promise<unknown>>(write: F) =>
    async (...args: Parameters<F>) => {
      const latency = faults.latencyMs();
      if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
      const hold = faults.hold[kind];
      faults.hold[kind] = undefined;
      await hold?.();
      if (faults[kind].shift()) throw new Error(`injected: a write of ${kind} failed`);
      return write(...args);
    };
  const writes = <T extends object>(target: T, names: string[]) =>
    new Proxy(target, {
      get: (object, name) => {
        const member = Reflect.get(object, name);
        return typeof name === "string" && names.includes(name)
          ? faulty((...args: never[]) => (member as (...a: never[]) => Promise<unknown>).apply(object, args))
          : member;
      },
    });
  return new Proxy(container, {
    get: (target, name) => {
      if (name === "item")
        return (id: string, key: string) => writes(target.item(id, key), ["replace", "delete"]);
      if (name === "items") return writes(target.items, ["create"]);
      return Reflect.get(target, name);
    },
  });
}

/** Every entry of the index, by orderId. */
async function entries(): Promise<Record<string, string>> {
  const { resources } = await containers.recovery.items
    .query<{ orderId: string; completeBy: string }>("SELECT c.orderId, c.completeBy FROM c")
    .fetchAll();
  return Object.fromEntries(resources.map((e) => [e.orderId, e.completeBy]));
}

async function create(record: StateRecord): Promise<StoredStateRecord> {
  const result = await store.createIfAbsent(record);
  if (!result.created) throw new Error(`${record.orderId} already existed`);
  return result.record;
}

/** A record owned by its first attempt, with deadline `completeBy`. */
async function owned(orderId: string, completeBy: string): Promise<StoredStateRecord> {
  const created = await create(pendingRecord(orderId));
  return write(created, { processState: "Processing", lockedBy: `${orderId}:1`, attempt: 1, completeBy });
}

async function write(record: StoredStateRecord, changes: Partial<StateRecord>): Promise<StoredStateRecord> {
  const written = await store.replace({ ...record, ...changes }, record._etag);
  if (!written.ok) throw written.error;
  return written.value;
}

const released = { processState: "Processed", lockedBy: null, completeBy: null } as const;

async function expiredIds(now: string, pageSize = 10, states: StateStore = store): Promise<string[]> {
  const seen: string[] = [];
  let token: string | null = null;
  do {
    const page = await states.queryExpired({ now, maxItems: pageSize, continuationToken: token });
    seen.push(...page.items.map((r) => r.orderId));
    token = page.continuationToken;
  } while (token);
  return seen;
}

describe("Cosmos DB recovery index: writes", () => {
  it("holds one entry per record that can expire, no later than its deadline, and none for the others", async () => {
    const pending = await create(pendingRecord("ord-pending"));
    const first = await owned("ord-a", at(60_000));
    await owned("ord-b", at(30_000));
    expect(await entries()).toEqual({ "ord-a": at(60_000), "ord-b": at(30_000) });

    const sooner = await write(first, { completeBy: at(20_000) });
    expect((await entries())["ord-a"]).toBe(at(20_000));
    // Moved later: the entry is left early (no index write), and the scan moves it when it comes due.
    faults.entries.push(true);
    await write(sooner, { completeBy: at(90_000) });
    expect(faults.entries).toEqual([true]);
    faults.entries.length = 0;
    expect((await entries())["ord-a"]).toBe(at(20_000));
    expect(await expiredIds(at(20_000))).toEqual([]);
    expect((await entries())["ord-a"]).toBe(at(90_000));
    expect(await expiredIds(at(90_000))).toEqual(["ord-b", "ord-a"]);
    const current = await store.get("ord-a");
    if (!current) throw new Error("ord-a vanished");
    await write(current, released);
    await write(pending, { replyTo: "another-queue" });
    expect(await entries()).toEqual({ "ord-b": at(30_000) });
  });

  it("writes the entry of a later deadline when the store does not know the version it replaces", async () => {
    const record = await owned("ord-a", at(30_000));
    const stranger = new CosmosStateStore({
      records: failing(containers.records, "records"),
      recovery: failing(containers.recovery, "entries"),
    });
    const written = await stranger.replace({ ...record, completeBy: at(80_000) }, record._etag);
    expect(written.ok).toBe(true);
    expect((await entries())["ord-a"]).toBe(at(80_000));
  });

  it("leaves an early entry, never a late one, when a write loses its race", async () => {
    const record = await owned("ord-a", at(60_000));
    const winner = await write(record, { completeBy: at(40_000) });
    // A writer that read the record before: its deadline is earlier, its ETag stale.
    const lost = await store.replace({ ...record, completeBy: at(10_000) }, record._etag);
    expect(lost.ok).toBe(false);
    expect((await entries())["ord-a"]).toBe(at(10_000));
    // And one whose deadline is later leaves the entry where it was.
    const lostLater = await store.replace({ ...record, completeBy: at(99_000) }, record._etag);
    expect(lostLater.ok).toBe(false);
    expect((await entries())["ord-a"]).toBe(at(10_000));
    expect((await store.get("ord-a"))?.completeBy).toBe(winner.completeBy);
  });

  it("covers the deadline before the record is written: a writer that dies in between leaves it covered", async () => {
    const record = await owned("ord-a", at(60_000));
    faults.records.push(true);
    await expect(store.replace({ ...record, completeBy: at(5_000) }, record._etag)).rejects.toThrow(
      /injected/,
    );
    expect((await entries())["ord-a"]).toBe(at(5_000));
    expect((await store.get("ord-a"))?.completeBy).toBe(at(60_000));
  });

  it("keeps the record written when the entry cannot be settled after it: the entry stays early or stale", async () => {
    const record = await owned("ord-a", at(30_000));
    // A writer that does not know the version it replaces takes every step of the write path.
    const stranger = new CosmosStateStore({
      records: failing(containers.records, "records"),
      recovery: failing(containers.recovery, "entries"),
    });
    faults.entries.push(false, true); // the entry is covered, then not raised
    const written = await stranger.replace({ ...record, completeBy: at(80_000) }, record._etag);
    if (!written.ok) throw written.error;
    const later = written.value;
    expect(later.completeBy).toBe(at(80_000));
    expect((await entries())["ord-a"]).toBe(at(30_000));
    faults.entries.push(true); // the entry is not deleted
    await write(later, released);
    expect((await entries())["ord-a"]).toBe(at(30_000));
  });
});

describe("Cosmos DB recovery index: the Supervisor's scan", () => {
  it("repairs an entry whose record was released, and does not return the record", async () => {
    const record = await owned("ord-done", at(10_000));
    faults.entries.push(true);
    await write(record, released);
    await owned("ord-late", at(20_000));
    expect(Object.keys(await entries())).toEqual(["ord-done", "ord-late"]);

    const page = await store.queryExpired({ now: at(30_000), maxItems: 10 });
    expect(page.items.map((r) => r.orderId)).toEqual(["ord-late"]);
    expect(await entries()).toEqual({ "ord-late": at(20_000) });
    expect((await store.get("ord-done"))?.processState).toBe("Processed");
  });

  it("moves an early entry to the record's deadline, returning the record only once that has passed", async () => {
    const record = await owned("ord-a", at(60_000));
    await store.replace({ ...record, completeBy: at(10_000) }, '"stale"'); // lost its race
    expect((await entries())["ord-a"]).toBe(at(10_000));

    expect(await expiredIds(at(20_000))).toEqual([]);
    expect((await entries())["ord-a"]).toBe(at(60_000));
    expect(await expiredIds(at(60_000))).toEqual(["ord-a"]);
  });

  it("returns a record whose early entry it repairs in the same scan once, at its own deadline", async () => {
    const a = await owned("ord-a", at(50_000));
    await owned("ord-b", at(40_000));
    await owned("ord-c", at(60_000));
    await store.replace({ ...a, completeBy: at(5_000) }, '"stale"');
    const page = await store.queryExpired({ now: at(70_000), maxItems: 10 });
    expect(page.items.map((r) => [r.orderId, r.completeBy])).toEqual([
      ["ord-b", at(40_000)],
      ["ord-a", at(50_000)],
      ["ord-c", at(60_000)],
    ]);
    // The record came back after its repair, with the ETag of that write: an update on it succeeds.
    const returned = page.items[1];
    if (!returned) throw new Error("missing");
    expect((await store.replace({ ...returned, updatedAt: at(1) }, returned._etag)).ok).toBe(true);
  });

  it("deletes the entry of a create that failed after writing it", async () => {
    await containers.recovery.items.create({ id: "ord-ghost", orderId: "ord-ghost", completeBy: at(1_000) });
    await owned("ord-real", at(2_000));
    expect(await expiredIds(at(5_000))).toEqual(["ord-real"]);
    expect(Object.keys(await entries())).toEqual(["ord-real"]);
  });

  it("finds a record expired 30 days ago, reading its entry and the record, and nothing else", async () => {
    for (let i = 0; i < 50; i++) await create(pendingRecord(`done-${i}`, { processState: "Processed" }));
    await owned("ord-old", at(-30 * 24 * 3_600_000));
    await store.queryExpired({ now: at(-31 * 24 * 3_600_000), maxItems: 1 }); // the first scan audits
    const page = await store.queryExpired({ now: at(0), maxItems: 10 });
    expect(page.items.map((r) => r.orderId)).toEqual(["ord-old"]);
    // One query of the index and one point read; the stand-in charges 1 RU a request.
    expect(page.cost).toMatchObject({ itemsReturned: 1, documentsRead: 2, requestUnits: 2 });
  });

  it("pages past stale and early entries returning each expired record once, in deadline order", async () => {
    const expected: [string, string][] = [];
    for (let i = 0; i < 30; i++) {
      const orderId = `ord-${String(i).padStart(2, "0")}`;
      const deadline = at(1_000 * ((i * 11) % 30));
      const record = await owned(orderId, deadline);
      if (i % 5 === 0) {
        faults.entries.push(true); // released, entry left behind
        await write(record, released);
      } else if (i % 5 === 1) {
        await store.replace({ ...record, completeBy: at(-1_000 - i) }, '"stale"'); // early entry
        expected.push([orderId, deadline]);
      } else if (i % 5 === 2) {
        const notYet = await write(record, { completeBy: at(500_000) });
        await store.replace({ ...notYet, completeBy: at(-1_000 - i) }, '"stale"'); // early entry
      } else {
        expected.push([orderId, deadline]);
      }
    }
    expected.sort(([a, x], [b, y]) => (x === y ? a.localeCompare(b) : x.localeCompare(y)));

    expect(await expiredIds(at(100_000), 4)).toEqual(expected.map(([orderId]) => orderId));
    const after = await entries();
    expect(Object.keys(after).length).toBe(expected.length + 6);
    for (const [orderId, deadline] of expected) expect(after[orderId]).toBe(deadline);
  });
});

/** Every record that can expire has an entry no later than its deadline. */
async function coverageProblems(): Promise<string[]> {
  const index = await entries();
  const { resources } = await containers.records.items.query<StateRecord>("SELECT * FROM c").fetchAll();
  return resources.flatMap((record) => {
    const deadline = indexedDeadline(record);
    const entry = index[record.orderId];
    if (deadline === null || (entry !== undefined && entry <= deadline)) return [];
    return [`${record.orderId}: deadline ${deadline}, entry ${entry ?? "none"}`];
  });
}

/**
 * Starts a replace and holds its next write to the `kind` container until `finish` is called (a record
 * write comes after the writer covered its deadline; an entry write of a release after its record write).
 */
async function heldWrite(
  kind: keyof Faults["hold"],
  record: StoredStateRecord,
  changes: Partial<StateRecord>,
) {
  let resume = () => {};
  const held = new Promise<void>((resolve) => {
    faults.hold[kind] = () => {
      resolve();
      return new Promise<void>((go) => {
        resume = go;
      });
    };
  });
  const written = store.replace({ ...record, ...changes }, record._etag);
  await held;
  return {
    finish: () => {
      resume();
      return written;
    },
  };
}

const claimOf = (orderId: string, attempt: number, completeBy: string): Partial<StateRecord> => ({
  processState: "Processing",
  lockedBy: `${orderId}:${attempt}`,
  attempt,
  completeBy,
});

describe("Cosmos DB recovery index: the audit", () => {
  /** A record written straight to the container, as a build without the index wrote records. */
  async function writtenWithoutIndex(orderId: string, completeBy: string): Promise<void> {
    const record = pendingRecord(orderId, claimOf(orderId, 1, completeBy));
    await containers.records.items.create({ id: orderId, ...record });
  }

  it("covers, on a store's first scan, the records a build without the index claimed", async () => {
    await writtenWithoutIndex("ord-expired", at(1_000));
    await writtenWithoutIndex("ord-running", at(90_000));
    await owned("ord-indexed", at(2_000));
    const first = await store.queryExpired({ now: at(10_000), maxItems: 10 });
    expect(first.items.map((r) => r.orderId)).toEqual(["ord-expired", "ord-indexed"]);
    expect(await entries()).toEqual({
      "ord-expired": at(1_000),
      "ord-running": at(90_000),
      "ord-indexed": at(2_000),
    });
    // Reads the three records in flight and the index's one entry, then scans: two entries, two reads.
    expect(first.cost.documentsRead).toBe(3 + 1 + 2 + 2);
    expect(await expiredIds(at(90_000))).toEqual(["ord-expired", "ord-indexed", "ord-running"]);
  });

  it("runs again on the first page of a scan once its interval has passed, not before", async () => {
    const hourly = new CosmosStateStore(containers);
    await hourly.queryExpired({ now: at(0), maxItems: 10 });
    await writtenWithoutIndex("ord-late", at(1_000));
    expect(await expiredIds(at(5_000), 10, hourly)).toEqual([]);

    const never = new CosmosStateStore(containers, { auditEveryMs: null });
    expect(await expiredIds(at(5_000), 10, never)).toEqual([]);
    expect(await never.auditRecoveryIndex()).toMatchObject({ covered: 1, documentsRead: 1 });
    expect(await expiredIds(at(5_000), 10, never)).toEqual(["ord-late"]);

    const always = new CosmosStateStore(containers, { auditEveryMs: 0 });
    await writtenWithoutIndex("ord-later", at(2_000));
    await always.queryExpired({ now: at(0), maxItems: 10 });
    await writtenWithoutIndex("ord-latest", at(3_000));
    expect(await expiredIds(at(5_000), 1, always)).toEqual(["ord-late", "ord-later", "ord-latest"]);
  });
});

describe("Cosmos DB recovery index: a create races with the scan", () => {
  it("restores the entry of a create that the scan took for the leftover of a failed one", async () => {
    let resume = () => {};
    const held = new Promise<void>((resolve) => {
      faults.hold.records = () => {
        resolve();
        return new Promise<void>((go) => {
          resume = go;
        });
      };
    });
    const created = store.createIfAbsent(pendingRecord("ord-a", claimOf("ord-a", 1, at(1_000))));
    await held;
    expect(await expiredIds(at(2_000))).toEqual([]);
    expect(await entries()).toEqual({});
    resume();
    expect((await created).created).toBe(true);
    expect(await coverageProblems()).toEqual([]);
    expect(await expiredIds(at(2_000))).toEqual(["ord-a"]);
  });
});

describe("Cosmos DB recovery index: a release races with the next claim", () => {
  it("keeps the entry of a claim written between the release's record write and its entry delete", async () => {
    const record = await owned("ord-a", at(10_000));
    const release = await heldWrite("entries", record, released);
    const done = await store.get("ord-a");
    if (!done) throw new Error("missing");
    // The same deadline as the released attempt's: the claim's write leaves the entry's value as it was.
    const claimed = await write(done, claimOf("ord-a", 2, at(10_000)));
    expect((await release.finish()).ok).toBe(true);
    expect(claimed.lockedBy).toBe("ord-a:2");
    expect(await coverageProblems()).toEqual([]);
    expect(await expiredIds(at(10_000))).toEqual(["ord-a"]);
  });
});

describe("Cosmos DB recovery index: the scan's repairs race with writers", () => {
  it("does not delete the entry of a claim written while it repairs the record's stale entry", async () => {
    const record = await owned("ord-a", at(10_000));
    faults.entries.push(true);
    const done = await write(record, released);
    const claim = await heldWrite("records", done, claimOf("ord-a", 2, at(5_000)));
    expect(await expiredIds(at(20_000))).toEqual([]);
    // The repair wrote the record back first, so the claim read a record that has changed since.
    const claimed = await claim.finish();
    expect(claimed.ok).toBe(false);
    expect(await coverageProblems()).toEqual([]);
    expect(await entries()).toEqual({});
  });

  it("does not move an entry past a deadline written while it repairs the early entry", async () => {
    const record = await owned("ord-a", at(60_000));
    await store.replace({ ...record, completeBy: at(10_000) }, '"stale"');
    const sooner = await heldWrite("records", record, { completeBy: at(20_000) });
    expect(await expiredIds(at(30_000))).toEqual([]);
    const written = await sooner.finish();
    expect(written.ok).toBe(false);
    expect(await coverageProblems()).toEqual([]);
    expect((await entries())["ord-a"]).toBe(at(60_000));
  });
});

describe("Cosmos DB recovery index: writers, failures and the scan at once", () => {
  it("keeps every deadline covered, and a final scan returns every expired record once", async () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const ids = Array.from({ length: 16 }, (_, i) => `ord-${i}`);
    for (const id of ids) await create(pendingRecord(id));
    faults.latencyMs = () => (random() < 0.5 ? 0 : random() * 4);

    /** One writer: reads, maybe waits for others to write, then writes a random change or fails. */
    const act = async (orderId: string) => {
      const record = await store.get(orderId);
      if (!record) throw new Error(`${orderId} missing`);
      await new Promise((resolve) => setTimeout(resolve, random() * 3));
      const roll = random();
      if (roll < 0.1) faults.records.push(true);
      else if (roll < 0.2) faults.entries.push(true);
      const deadline = at(Math.floor(random() * 100) * 1_000);
      const change: Partial<StateRecord> =
        random() < 0.3
          ? random() < 0.5
            ? released
            : { processState: "Pending", lockedBy: null, completeBy: null }
          : {
              processState: random() < 0.8 ? "Processing" : "Compensating",
              lockedBy: `${orderId}:1`,
              completeBy: deadline,
            };
      await store.replace({ ...record, ...change }, record._etag).catch(() => undefined);
    };

    for (let round = 0; round < 25; round++) {
      const writers = Array.from({ length: 12 }, () => act(ids[Math.floor(random() * ids.length)] ?? ""));
      const scan = expiredIds(at(Math.floor(random() * 100) * 1_000), 3).catch(() => []);
      await Promise.all([...writers, scan]);
      faults.records.length = 0;
      faults.entries.length = 0;
      expect(await coverageProblems(), `round ${round}`).toEqual([]);
    }

    const now = at(100_000);
    const { resources } = await containers.records.items.query<StateRecord>("SELECT * FROM c").fetchAll();
    const expired = resources
      .filter((r) => indexedDeadline(r) !== null)
      .map((r) => [r.orderId, r.completeBy ?? ""] as const)
      .sort(([a, x], [b, y]) => (x === y ? a.localeCompare(b) : x.localeCompare(y)));
    expect(expired.length).toBeGreaterThan(0);
    expect(await expiredIds(now, 3)).toEqual(expired.map(([orderId]) => orderId));
    // Every entry left agrees with its record exactly.
    expect(await entries()).toEqual(Object.fromEntries(expired));
  });
});
