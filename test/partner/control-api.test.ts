import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { Ledger, type LedgerEvent, type LedgerJournal } from "../../partner/ledger.js";
import { type LedgerFile, openLedgerFile } from "../../partner/ledger-file.js";
import {
  PARTNER_KEY_HEADER,
  type PartnerControlState,
  type PartnerService,
  type PartnerServiceOptions,
  startPartnerService,
} from "../../partner/partner-service.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

const KEY = "s3cret-partner-key";
const START = "2026-01-01T00:00:00.000Z";

let clock: VirtualClock;
let logger: MemoryLogger;
const services: PartnerService[] = [];
const files: LedgerFile[] = [];
const folders: string[] = [];

beforeEach(() => {
  clock = new VirtualClock(START);
});

afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
  for (const file of files.splice(0)) file.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A partner with the key `KEY`, or open to all when `accessKey` is null. */
async function start(
  options: Partial<Omit<PartnerServiceOptions, "clock" | "logger" | "accessKey">> = {},
  accessKey: string | null = KEY,
) {
  logger = new MemoryLogger();
  const service = await startPartnerService({
    clock,
    logger,
    ...(accessKey !== null ? { accessKey } : {}),
    ...options,
  });
  services.push(service);
  return service;
}

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Headers;
}

async function request(
  service: PartnerService,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; key?: string | null; idempotencyKey?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const key = options.key === undefined ? KEY : options.key;
  if (key !== null) headers[PARTNER_KEY_HEADER] = key;
  if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const response = await fetch(`${service.url}${path}`, { method, headers, ...(body ? { body } : {}) });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

const charge = (service: PartnerService, key: string, orderId = "o-1", accessKey?: string | null) =>
  request(service, "POST", "/operations/chargePayment", {
    body: { orderId },
    idempotencyKey: key,
    ...(accessKey !== undefined ? { key: accessKey } : {}),
  });

const control = async (service: PartnerService) =>
  (await request(service, "GET", "/control")).body as unknown as PartnerControlState;

describe("the access key", () => {
  it("refuses a call without the key (401) or with another (403), applies nothing, and counts it", async () => {
    const partner = await start();
    const missing = await charge(partner, "k-1", "o-1", null);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({
      error: "unauthenticated",
      message: "this partner needs its access key in the x-partner-key header",
    });
    const wrong = await charge(partner, "k-1", "o-1", `${KEY}x`);
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ error: "forbidden" });
    expect(String(wrong.body.message)).not.toContain(KEY);
    expect(partner.ledger()).toMatchObject({ calls: 0, effects: 0, unauthorized: 2 });

    const right = await charge(partner, "k-1");
    expect(right).toMatchObject({ status: 200, body: { reference: "pay-000001", replayed: false } });
    expect(partner.ledger()).toMatchObject({ calls: 1, effects: 1, unauthorized: 2 });
    expect(logger.events("partner.unauthorized").map((line) => line.status)).toEqual([401, 403]);
    expect(JSON.stringify(logger.lines)).not.toContain(KEY);
  });

  it("guards the books and the control API too, and leaves GET /health open", async () => {
    const partner = await start();
    expect((await request(partner, "GET", "/ledger", { key: null })).status).toBe(401);
    expect((await request(partner, "GET", "/control", { key: "other" })).status).toBe(403);
    expect(
      (await request(partner, "POST", "/control/outage", { key: null, body: { seconds: 60 } })).status,
    ).toBe(401);
    expect(partner.control().outage).toBeNull();
    const health = await request(partner, "GET", "/health", { key: null });
    expect(health).toMatchObject({ status: 200, body: { status: "ok" } });
    expect((await request(partner, "GET", "/ledger")).body.totals).toMatchObject({ unauthorized: 3 });
  });

  it("F24-5: counts a refused caller in memory only: nothing journaled, and no wait on the books", async () => {
    const journaled: LedgerEvent[] = [];
    let stalled = false;
    // A journal that records what is appended, and whose writes hang once `stalled` is set.
    const journal: LedgerJournal = {
      append: (event) => void journaled.push(event),
      clear: () => {},
      durable: () => (stalled ? new Promise<void>(() => {}) : Promise.resolve()),
    };
    const partner = await start({ ledger: new Ledger(journal) });
    const before = journaled.length;
    stalled = true;
    const refused = [
      await request(partner, "GET", "/ledger", { key: null }),
      await request(partner, "POST", "/control/outage", { key: "other", body: { seconds: 60 } }),
      await charge(partner, "k-1", "o-1", "wrong"),
    ];
    expect(refused.map((reply) => reply.status)).toEqual([401, 403, 403]);
    expect(journaled.slice(before)).toEqual([]);
    expect(partner.ledger().unauthorized).toBe(3);
    expect(logger.events("partner.unauthorized")).toHaveLength(3);
    stalled = false;
    expect((await request(partner, "GET", "/ledger")).body.totals).toMatchObject({
      unauthorized: 3,
      calls: 0,
    });
    partner.reset();
    expect(partner.ledger().unauthorized).toBe(0);
  });

  it("is open to all without a key, and refuses an empty key at start", async () => {
    const open = await start({}, null);
    expect((await charge(open, "k-1", "o-1", null)).status).toBe(200);
    await expect(start({}, "")).rejects.toThrow(/accessKey must not be empty/);
  });
});

describe("the control API", () => {
  it("answers the rates, seed, slowMs, no outage, and the start-up rates as the settings' change", async () => {
    const partner = await start({ faults: { transient: 0.2 }, seed: 5, slowMs: 1_500 });
    expect(await control(partner)).toEqual({
      faults: { transient: 0.2, permanent: 0, slow: 0, lostReply: 0 },
      outage: null,
      seed: 5,
      slowMs: 1_500,
      changes: [
        {
          at: START,
          change: "faults",
          by: "settings",
          faults: { transient: 0.2, permanent: 0, slow: 0, lostReply: 0 },
        },
      ],
    });
  });

  it("merges new rates over the current ones, and refuses a wrong whole naming the rate", async () => {
    const partner = await start({ faults: { transient: 0.2, slow: 0.1 } });
    await clock.advance(1_000);
    const merged = await request(partner, "POST", "/control/faults", { body: { permanent: 0.3, slow: 0 } });
    expect(merged.status).toBe(200);
    expect(merged.body.faults).toEqual({ transient: 0.2, permanent: 0.3, slow: 0, lostReply: 0 });
    expect((merged.body.changes as unknown[]).at(-1)).toEqual({
      at: "2026-01-01T00:00:01.000Z",
      change: "faults",
      by: "operator",
      faults: { transient: 0.2, permanent: 0.3, slow: 0, lostReply: 0 },
    });

    const refusals: Array<[unknown, string]> = [
      [{ slow: 2 }, "faults.slow must be a rate from 0 to 1"],
      [{ lostReply: "0.1" }, "faults.lostReply must be a rate from 0 to 1"],
      [{ transient: 0.8 }, "must be at most 1, got 1.1"],
      [{ flaky: 0.1 }, "faults.flaky is not a fault kind"],
      [[0.1], "the request body must be a JSON object"],
    ];
    for (const [body, message] of refusals) {
      const refused = await request(partner, "POST", "/control/faults", { body });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe("invalid-faults");
      expect(refused.body.message).toContain(message);
    }
    const notJson = await request(partner, "POST", "/control/faults", { raw: "{transient:" });
    expect(notJson.body).toMatchObject({ error: "invalid-faults" });
    expect(String(notJson.body.message)).toContain("not valid JSON");
    expect(partner.control().faults).toEqual({ transient: 0.2, permanent: 0.3, slow: 0, lostReply: 0 });
    expect(partner.control().changes).toHaveLength(2);
    expect(partner.ledger().badRequests).toBe(6);

    // The same rates again change nothing, and are not a change.
    await request(partner, "POST", "/control/faults", { body: { permanent: 0.3 } });
    expect(partner.control().changes).toHaveLength(2);
  });

  it("refuses calls during an outage with 503 and Retry-After, applies nothing, and keeps the rest answering", async () => {
    const partner = await start();
    const down = await request(partner, "POST", "/control/outage", { body: { seconds: 60 } });
    expect(down.status).toBe(200);
    expect(down.body.outage).toEqual({ since: START, until: "2026-01-01T00:01:00.000Z" });

    const refused = await charge(partner, "k-1");
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      error: "outage",
      message: "the partner is down until 2026-01-01T00:01:00.000Z",
      until: "2026-01-01T00:01:00.000Z",
    });
    expect(refused.headers.get("retry-after")).toBe("60");
    await clock.advance(30_500);
    expect((await charge(partner, "k-1")).headers.get("retry-after")).toBe("30");
    await clock.advance(29_000);
    expect((await charge(partner, "k-1")).headers.get("retry-after")).toBe("1");
    expect(partner.ledger()).toMatchObject({ calls: 3, effects: 0, outageRefusals: 3, transientFaults: 0 });
    expect(logger.events("partner.call").map((line) => line.outcome)).toEqual(["outage", "outage", "outage"]);

    expect((await request(partner, "GET", "/ledger")).status).toBe(200);
    expect((await request(partner, "GET", "/health", { key: null })).status).toBe(200);
    expect((await request(partner, "GET", "/control")).body.outage).not.toBeNull();

    // Over by itself on the clock: no change needed.
    await clock.advance(500);
    expect(await charge(partner, "k-1")).toMatchObject({ status: 200, body: { reference: "pay-000001" } });
    expect((await control(partner)).outage).toBeNull();
    expect((await control(partner)).changes.map((change) => change.change)).toEqual(["faults", "outage"]);
  });

  it("gives a running outage a new end, keeping its start, and ends it on DELETE", async () => {
    const partner = await start();
    await request(partner, "POST", "/control/outage", { body: { seconds: 600 } });
    await clock.advance(60_000);
    const longer = await request(partner, "POST", "/control/outage", { body: { seconds: 3_600 } });
    expect(longer.body.outage).toEqual({ since: START, until: "2026-01-01T01:01:00.000Z" });
    await clock.advance(60_000);

    const up = await request(partner, "DELETE", "/control/outage");
    expect(up.status).toBe(200);
    expect(up.body.outage).toBeNull();
    expect((await charge(partner, "k-1")).status).toBe(200);
    expect((await request(partner, "DELETE", "/control/outage")).status).toBe(200);
    expect((await control(partner)).changes).toEqual([
      expect.objectContaining({ change: "faults", by: "settings" }),
      { at: START, change: "outage", by: "operator", until: "2026-01-01T00:10:00.000Z" },
      { at: "2026-01-01T00:01:00.000Z", change: "outage", by: "operator", until: "2026-01-01T01:01:00.000Z" },
      { at: "2026-01-01T00:02:00.000Z", change: "recovered", by: "operator" },
    ]);
    // A later outage starts anew.
    await clock.advance(1_000);
    const again = await request(partner, "POST", "/control/outage", { body: { seconds: 1 } });
    expect(again.body.outage).toEqual({
      since: "2026-01-01T00:02:01.000Z",
      until: "2026-01-01T00:02:02.000Z",
    });
  });

  it.each([
    [{ seconds: 0 }, "got 0"],
    [{ seconds: 86_401 }, "got 86401"],
    [{ seconds: 1.5 }, "got 1.5"],
    [{ seconds: "60" }, 'got "60"'],
    [{}, "got nothing"],
  ])("refuses the outage %o naming seconds", async (body, got) => {
    const partner = await start();
    const refused = await request(partner, "POST", "/control/outage", { body });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: "invalid-outage",
      message: `seconds must be a whole number from 1 to 86400, ${got}`,
    });
    expect(partner.control().outage).toBeNull();
  });

  it("answers 405 for another method and 404 for another path under /control", async () => {
    const partner = await start();
    const put = await request(partner, "PUT", "/control/outage", { body: {} });
    expect([put.status, put.headers.get("allow")]).toEqual([405, "POST, DELETE"]);
    expect((await request(partner, "GET", "/control/faults")).status).toBe(405);
    expect((await request(partner, "POST", "/control", { body: {} })).status).toBe(405);
    expect((await request(partner, "GET", "/control/seed")).body.error).toBe("not-found");
  });

  it("lists the last 50 changes, oldest first", async () => {
    const partner = await start();
    for (let i = 1; i <= 60; i++) await partner.changeFaults({ transient: i / 100 });
    const { changes } = await control(partner);
    expect(changes).toHaveLength(50);
    expect(changes[0]?.faults?.transient).toBe(0.11);
    expect(changes[49]?.faults?.transient).toBe(0.6);
  });

  it("checks the rates and seconds given to the service's own methods", async () => {
    const partner = await start();
    await expect(partner.changeFaults({ slow: -1 })).rejects.toThrow(RangeError);
    await expect(partner.startOutage(0)).rejects.toThrow(/seconds/);
    expect((await partner.startOutage(5)).outage).toEqual({
      since: START,
      until: "2026-01-01T00:00:05.000Z",
    });
    expect((await partner.endOutage()).outage).toBeNull();
  });
});

describe("control changes in the books", () => {
  function ledgerFile(): () => LedgerFile {
    const folder = mkdtempSync(join(tmpdir(), "sas-partner-control-"));
    folders.push(folder);
    return () => {
      const file = openLedgerFile(join(folder, "partner.sqlite"));
      files.push(file);
      return file;
    };
  }

  async function restart(service: PartnerService, file: LedgerFile): Promise<void> {
    services.splice(services.indexOf(service), 1);
    await service.close();
    files.splice(files.indexOf(file), 1);
    file.close();
  }

  it("keeps a running outage across a restart, and journals start-up rates only when they differ", async () => {
    const open = ledgerFile();
    const first = open();
    const partner = await start({ ledger: first.ledger, faults: { transient: 0.1 } });
    await request(partner, "POST", "/control/faults", { body: { slow: 0.2 } });
    await request(partner, "POST", "/control/outage", { body: { seconds: 300 } });
    const before = partner.control();
    await restart(partner, first);

    await clock.advance(60_000);
    const second = open();
    // Start-up rates other than the last ones in the books (the operator's): the settings' change.
    const again = await start({ ledger: second.ledger, faults: { transient: 0.1 } });
    expect((await charge(again, "k-1")).status).toBe(503);
    const after = again.control();
    expect(after.outage).toEqual(before.outage);
    expect(after.faults).toEqual({ transient: 0.1, permanent: 0, slow: 0, lostReply: 0 });
    expect(after.changes.slice(0, 3)).toEqual(before.changes);
    expect(after.changes.slice(3)).toEqual([
      {
        at: "2026-01-01T00:01:00.000Z",
        change: "faults",
        by: "settings",
        faults: { transient: 0.1, permanent: 0, slow: 0, lostReply: 0 },
      },
    ]);
    await restart(again, second);

    const third = open();
    const unchanged = await start({ ledger: third.ledger, faults: { transient: 0.1 } });
    expect(unchanged.control().changes).toHaveLength(4);
    await clock.advance(240_000);
    expect(unchanged.control().outage).toBeNull();
    expect((await charge(unchanged, "k-1")).status).toBe(200);
  });
});
