import { request } from "node:http";
import { connect, createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { Ledger, type LedgerEvent, type LedgerJournal } from "../../partner/ledger.js";
import {
  NO_FAULTS,
  PARTNER_OPERATIONS,
  type PartnerService,
  type PartnerServiceOptions,
  startPartnerService,
  UNDO_OF,
} from "../../partner/partner-service.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

const SLOW_MS = 30_000;

let clock: VirtualClock;
let logger: MemoryLogger;
const services: PartnerService[] = [];

afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
});

async function start(options: Partial<Omit<PartnerServiceOptions, "clock" | "logger">> = {}) {
  clock = new VirtualClock();
  logger = new MemoryLogger();
  const service = await startPartnerService({ clock, logger, ...options });
  services.push(service);
  return service;
}

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Headers;
}

interface PostOptions {
  /** Sent as is instead of the JSON of `body`. */
  readonly raw?: string;
  readonly method?: string;
  readonly path?: string;
}

async function post(
  service: PartnerService,
  operation: string,
  key: string | null,
  body: unknown,
  options: PostOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (key !== null) headers["Idempotency-Key"] = key;
  const method = options.method ?? "POST";
  const response = await fetch(`${service.url}${options.path ?? `/operations/${operation}`}`, {
    method,
    headers,
    ...(method === "POST" ? { body: options.raw ?? JSON.stringify(body) } : {}),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

/**
 * POSTs a charge with `target` sent as the request target exactly as given: fetch, and node:http given
 * a URL, resolve dot segments before sending, a `path` option is sent as is.
 */
async function sendTarget(
  service: PartnerService,
  target: string,
  key: string,
): Promise<{ status: number; error: unknown }> {
  const { hostname, port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const call = request({
      host: hostname,
      port: Number(port),
      path: target,
      method: "POST",
      headers: { "Idempotency-Key": key, "Content-Type": "application/json" },
    });
    call.once("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.once("end", () => {
        const body = JSON.parse(text) as { error?: unknown };
        resolve({ status: response.statusCode ?? 0, error: body.error });
      });
    });
    call.once("error", reject);
    call.end(JSON.stringify({ orderId: "o" }));
  });
}

/** What a caller sees: the status, or "network-error" when the connection was dropped. */
async function outcome(service: PartnerService, operation: string, key: string, orderId: string) {
  try {
    return String((await post(service, operation, key, { orderId })).status);
  } catch {
    return "network-error";
  }
}

interface BadRequest {
  readonly name: string;
  readonly send: (partner: PartnerService) => Promise<Reply>;
  readonly status: number;
  readonly error: string;
  readonly mentions: string;
}

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Lets the event loop run (loopback I/O included) until `condition` holds; no wall-clock sleeping. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (condition()) return;
    await turn();
  }
  throw new Error("condition not met after 10,000 event-loop turns");
}

function track(promise: Promise<unknown>): { settled: boolean } {
  const state = { settled: false };
  promise.then(
    () => {
      state.settled = true;
    },
    () => {
      state.settled = true;
    },
  );
  return state;
}

describe("calls and replays", () => {
  it("applies the first call for a key and replays it for every later call with the same key", async () => {
    const partner = await start();
    const first = await post(partner, "chargePayment", "ord-1:chargePayment", {
      orderId: "ord-1",
      amount: 2598,
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      operation: "chargePayment",
      orderId: "ord-1",
      reference: "pay-000001",
      replayed: false,
    });
    const again = await post(partner, "chargePayment", "ord-1:chargePayment", {
      orderId: "ord-1",
      amount: 2598,
    });
    expect(again.body).toEqual({ ...first.body, replayed: true });

    const ledger = partner.ledger();
    expect(ledger).toMatchObject({ calls: 2, effects: 1, duplicateEffects: 0 });
    expect(ledger.byOperation.chargePayment).toEqual({ calls: 2, effects: 1 });
    expect(ledger.callsForKey("ord-1:chargePayment")).toBe(2);
    expect(ledger.effectsForKey("ord-1:chargePayment")).toBe(1);
    expect(ledger.callsForOrder("ord-1")).toBe(2);
    expect(ledger.effectsByOrder["ord-1"]).toEqual([
      {
        operation: "chargePayment",
        orderId: "ord-1",
        idempotencyKey: "ord-1:chargePayment",
        reference: "pay-000001",
        appliedAt: "2026-01-01T00:00:00.000Z",
        undone: false,
        undoneBy: null,
      },
    ]);
    expect(
      logger.events("partner.call").map((l) => [l.operation, l.idempotencyKey, l.orderId, l.outcome]),
    ).toEqual([
      ["chargePayment", "ord-1:chargePayment", "ord-1", "applied"],
      ["chargePayment", "ord-1:chargePayment", "ord-1", "replayed"],
    ]);
  });

  it("issues references numbered per operation, with the operation's prefix", async () => {
    const partner = await start();
    const references: unknown[] = [];
    for (const operation of ["reserveInventory", "chargePayment", "arrangeShipment", "reserveInventory"]) {
      references.push(
        (await post(partner, operation, `k-${references.length}`, { orderId: "o" })).body.reference,
      );
    }
    expect(references).toEqual(["res-000001", "pay-000001", "shp-000001", "res-000002"]);
    expect(PARTNER_OPERATIONS).toHaveLength(2 * Object.keys(UNDO_OF).length);
    expect(UNDO_OF).toMatchObject({
      reserveInventory: "releaseInventory",
      chargePayment: "refundPayment",
      arrangeShipment: "cancelShipment",
      notifyCustomer: "sendCorrection",
    });
  });

  it("answers 409 and applies nothing when a key is reused for another order or operation", async () => {
    const partner = await start();
    await post(partner, "chargePayment", "key-1", { orderId: "ord-1" });
    const otherOrder = await post(partner, "chargePayment", "key-1", { orderId: "ord-2" });
    expect(otherOrder.status).toBe(409);
    expect(otherOrder.body).toMatchObject({
      error: "idempotency-key-reused",
      idempotencyKey: "key-1",
      boundTo: { operation: "chargePayment", orderId: "ord-1", reference: null },
    });
    expect(otherOrder.body.message).toContain("ord-2");
    const otherOperation = await post(partner, "arrangeShipment", "key-1", { orderId: "ord-1" });
    expect(otherOperation.status).toBe(409);
    expect(partner.ledger()).toMatchObject({ calls: 3, effects: 1, conflicts: 2 });
    expect(partner.ledger().effectsByOrder["ord-2"]).toBeUndefined();
  });

  const badRequests: readonly BadRequest[] = [
    {
      name: "a missing Idempotency-Key",
      status: 400,
      error: "missing-idempotency-key",
      mentions: "Idempotency-Key",
      send: (p) => post(p, "chargePayment", null, { orderId: "o" }),
    },
    {
      name: "an Idempotency-Key over 200 characters",
      status: 400,
      error: "invalid-idempotency-key",
      mentions: "1 to 200",
      send: (p) => post(p, "chargePayment", "k".repeat(201), { orderId: "o" }),
    },
    {
      name: "an unknown operation",
      status: 404,
      error: "unknown-operation",
      mentions: "teleportParcel",
      send: (p) => post(p, "teleportParcel", "k", { orderId: "o" }),
    },
    {
      name: "a body that is not JSON",
      status: 400,
      error: "invalid-json",
      mentions: "not valid JSON",
      send: (p) => post(p, "chargePayment", "k", null, { raw: "{orderId:" }),
    },
    {
      name: "a body that is not an object",
      status: 400,
      error: "invalid-body",
      mentions: "JSON object",
      send: (p) => post(p, "chargePayment", "k", ["o"]),
    },
    {
      name: "a missing orderId",
      status: 400,
      error: "invalid-body",
      mentions: "orderId",
      send: (p) => post(p, "chargePayment", "k", { amount: 1 }),
    },
    {
      name: "an orderId that is not a string",
      status: 400,
      error: "invalid-body",
      mentions: "orderId",
      send: (p) => post(p, "chargePayment", "k", { orderId: 7 }),
    },
    {
      name: "an undo without a reference",
      status: 400,
      error: "invalid-body",
      mentions: "reference",
      send: (p) => post(p, "refundPayment", "k", { orderId: "o" }),
    },
    {
      name: "a body over 64 KiB",
      status: 413,
      error: "body-too-large",
      mentions: "65536 bytes",
      send: (p) => post(p, "chargePayment", "k", { orderId: "o", padding: "x".repeat(65_536) }),
    },
    {
      name: "a GET",
      status: 405,
      error: "method-not-allowed",
      mentions: "POST",
      send: (p) => post(p, "chargePayment", "k", null, { method: "GET" }),
    },
    {
      name: "an unknown path",
      status: 404,
      error: "not-found",
      mentions: "/operations/",
      send: (p) => post(p, "", "k", { orderId: "o" }, { path: "/charge" }),
    },
  ];

  it.each(badRequests)("rejects $name with $status", async ({ send, status, error, mentions }) => {
    const partner = await start();
    const reply = await send(partner);
    expect(reply.status).toBe(status);
    expect(reply.body.error).toBe(error);
    expect(reply.body.message).toContain(mentions);
    expect(partner.ledger()).toMatchObject({ calls: 0, effects: 0, badRequests: 1 });
  });

  it("accepts a key of exactly 200 characters", async () => {
    const partner = await start();
    expect((await post(partner, "chargePayment", "k".repeat(200), { orderId: "o" })).status).toBe(200);
  });

  it("routes on the path without its query, refuses dot segments as unknown, and accepts an absolute-form target", async () => {
    const partner = await start();
    const withQuery = await post(
      partner,
      "",
      "k-1",
      { orderId: "o" },
      { path: "/operations/chargePayment?x=1" },
    );
    expect(withQuery.status).toBe(200);
    const dotted = await sendTarget(partner, "/control/../operations/chargePayment", "k-2");
    expect(dotted).toEqual({ status: 404, error: "not-found" });
    const absolute = await sendTarget(partner, `${partner.url}/operations/chargePayment`, "k-3");
    expect(absolute).toEqual({ status: 200, error: undefined });
    expect(partner.ledger()).toMatchObject({ calls: 2, effects: 2 });
  });

  it("keeps serving after a caller goes away in the middle of its body, with nothing applied", async () => {
    const partner = await start();
    const { hostname, port } = new URL(partner.url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          "POST /operations/chargePayment HTTP/1.1\r\nHost: partner\r\nIdempotency-Key: cut\r\n" +
            'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"orderId":',
          () => socket.destroy(),
        );
      });
      socket.once("close", () => resolve());
      socket.once("error", reject);
    });
    await until(() => logger.events("partner.caller-gone").length > 0);
    expect(logger.events("partner.internal-error")).toEqual([]);
    expect((await post(partner, "chargePayment", "whole", { orderId: "o" })).status).toBe(200);
    expect(partner.ledger()).toMatchObject({ calls: 1, effects: 1 });
  });
});

describe("undo", () => {
  it("undoes a real effect once, replays the undo, and no longer counts the effect as live", async () => {
    const partner = await start();
    const charge = await post(partner, "chargePayment", "o:charge", { orderId: "o" });
    const refund = await post(partner, "refundPayment", "o:charge:undo", {
      orderId: "o",
      reference: charge.body.reference,
    });
    expect(refund.status).toBe(200);
    expect(refund.body).toEqual({
      operation: "refundPayment",
      orderId: "o",
      reference: "ref-000001",
      replayed: false,
      undone: true,
      effectReference: "pay-000001",
    });
    const again = await post(partner, "refundPayment", "o:charge:undo", {
      orderId: "o",
      reference: "pay-000001",
    });
    expect(again.body).toEqual({ ...refund.body, replayed: true });

    let ledger = partner.ledger();
    expect(ledger).toMatchObject({ effects: 1, undos: 1 });
    expect(ledger.byOperation.refundPayment).toEqual({ calls: 2, effects: 1 });
    expect(ledger.effectsByOrder.o?.[0]).toMatchObject({ undone: true, undoneBy: "ref-000001" });

    // A new charge after the refund is a new effect, not a duplicate of the undone one.
    await post(partner, "chargePayment", "o:charge:2", { orderId: "o" });
    ledger = partner.ledger();
    expect(ledger).toMatchObject({ effects: 2, duplicateEffects: 0 });
  });

  it("answers success with nothing undone for a reference it never issued or issued for another order", async () => {
    const partner = await start();
    const reserve = await post(partner, "reserveInventory", "a:reserve", { orderId: "a" });
    const cases = [
      { key: "u1", operation: "releaseInventory", orderId: "a", reference: "res-999999" },
      { key: "u2", operation: "releaseInventory", orderId: "b", reference: reserve.body.reference },
      { key: "u3", operation: "refundPayment", orderId: "a", reference: reserve.body.reference },
    ];
    for (const { key, operation, orderId, reference } of cases) {
      const reply = await post(partner, operation, key, { orderId, reference });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        operation,
        orderId,
        reference: null,
        replayed: false,
        undone: false,
        effectReference: reference,
      });
    }
    const ledger = partner.ledger();
    expect(ledger.undos).toBe(0);
    expect(ledger.effectsByOrder.a?.[0]?.undone).toBe(false);
    expect(logger.events("partner.call").filter((l) => l.outcome === "nothing-to-undo")).toHaveLength(3);
  });

  it("finds nothing to undo when the effect was already undone under another key", async () => {
    const partner = await start();
    await post(partner, "arrangeShipment", "s", { orderId: "o" });
    await post(partner, "cancelShipment", "c1", { orderId: "o", reference: "shp-000001" });
    const second = await post(partner, "cancelShipment", "c2", { orderId: "o", reference: "shp-000001" });
    expect(second.body).toMatchObject({ reference: null, undone: false, replayed: false });
    expect(partner.ledger().undos).toBe(1);
  });

  it("answers 409 when an undo key is reused for another reference", async () => {
    const partner = await start();
    await post(partner, "cancelShipment", "c", { orderId: "o", reference: "shp-000001" });
    const reply = await post(partner, "cancelShipment", "c", { orderId: "o", reference: "shp-000002" });
    expect(reply.status).toBe(409);
    expect(reply.body.boundTo).toEqual({
      operation: "cancelShipment",
      orderId: "o",
      reference: "shp-000001",
    });
  });
});

describe("duplicate effects", () => {
  it("stays 0 with stable keys and counts an effect applied again for the same order under a new key", async () => {
    const partner = await start();
    for (let i = 0; i < 3; i++) await post(partner, "chargePayment", "o:charge", { orderId: "o" });
    await post(partner, "chargePayment", "p:charge", { orderId: "p" });
    expect(partner.ledger().duplicateEffects).toBe(0);

    await post(partner, "chargePayment", "o:charge:attempt-2", { orderId: "o" });
    const ledger = partner.ledger();
    expect(ledger.duplicateEffects).toBe(1);
    expect(ledger.effectsForKey("o:charge")).toBe(1);
    expect(ledger.effectsForKey("o:charge:attempt-2")).toBe(1);
    expect(ledger.effectsByOrder.o?.map((e) => e.reference)).toEqual(["pay-000001", "pay-000003"]);
  });
});

describe("fault injection", () => {
  it("transient: answers 503 or 429 with Retry-After and applies nothing", async () => {
    const partner = await start({ faults: { transient: 1 } });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(partner, "reserveInventory", `k${i}`, { orderId: `o${i}` })),
    );
    const statuses = new Set(replies.map((r) => r.status));
    expect(statuses).toEqual(new Set([503, 429]));
    for (const reply of replies) {
      if (reply.status === 503) expect(reply.body.error).toBe("unavailable");
      else expect([reply.body.error, reply.headers.get("retry-after")]).toEqual(["throttled", "1"]);
    }
    expect(partner.ledger()).toMatchObject({ calls: 20, effects: 0, transientFaults: 20 });

    partner.setFaults(NO_FAULTS);
    const retry = await post(partner, "reserveInventory", "k0", { orderId: "o0" });
    expect(retry.body).toMatchObject({ reference: "res-000001", replayed: false });
  });

  it("transient faults also reach undo calls, which succeed once retried without faults", async () => {
    const partner = await start();
    await post(partner, "chargePayment", "c", { orderId: "o" });
    partner.setFaults({ transient: 1 });
    expect([503, 429]).toContain(
      (await post(partner, "refundPayment", "r", { orderId: "o", reference: "pay-000001" })).status,
    );
    partner.setFaults(NO_FAULTS);
    const retry = await post(partner, "refundPayment", "r", { orderId: "o", reference: "pay-000001" });
    expect(retry.body).toMatchObject({ undone: true, replayed: false });
  });

  it("permanent: answers 422 with a reason, applies nothing, and keeps answering 422 for that key", async () => {
    const partner = await start({ faults: { permanent: 1 } });
    const first = await post(partner, "chargePayment", "o:charge", { orderId: "o" });
    expect(first.status).toBe(422);
    expect(first.body).toEqual({
      error: "rejected",
      reason: "card-declined",
      operation: "chargePayment",
      orderId: "o",
    });

    partner.setFaults(NO_FAULTS);
    const later = await post(partner, "chargePayment", "o:charge", { orderId: "o" });
    expect(later.status).toBe(422);
    expect(later.body).toEqual(first.body);
    expect(partner.ledger()).toMatchObject({ calls: 2, effects: 0, rejections: 2 });
    expect(logger.events("partner.call").map((l) => l.outcome)).toEqual(["rejected", "rejected"]);
  });

  it("permanent: never rejects a key whose effect was already applied, and never rejects an undo", async () => {
    const partner = await start();
    const applied = await post(partner, "reserveInventory", "r", { orderId: "o" });
    partner.setFaults({ permanent: 1 });
    const replay = await post(partner, "reserveInventory", "r", { orderId: "o" });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ ...applied.body, replayed: true });
    const undo = await post(partner, "releaseInventory", "u", { orderId: "o", reference: "res-000001" });
    expect(undo.body).toMatchObject({ undone: true });
    expect(partner.ledger().rejections).toBe(0);
  });

  it("permanent with undoRefusals: rejects an undo for good, leaving the effect applied", async () => {
    const partner = await start({ undoRefusals: true });
    const charged = await post(partner, "chargePayment", "c", { orderId: "o" });
    partner.setFaults({ permanent: 1 });
    const refund = { orderId: "o", reference: charged.body.reference };
    const refused = await post(partner, "refundPayment", "c:undo", refund);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ error: "rejected", reason: "refund-window-closed" });
    partner.setFaults({});
    expect((await post(partner, "refundPayment", "c:undo", refund)).status).toBe(422);
    expect(partner.ledger()).toMatchObject({ effects: 1, undos: 0 });
  });

  it("slow: applies the effect at once and answers only after slowMs on the clock", async () => {
    const partner = await start({ faults: { slow: 1 }, slowMs: SLOW_MS });
    const pending = post(partner, "arrangeShipment", "o:ship", { orderId: "o" });
    const state = track(pending);
    await until(() => clock.pendingSleeps === 1);
    expect(partner.ledger()).toMatchObject({ effects: 1, slowReplies: 1 });
    for (let i = 0; i < 5; i++) await turn();
    expect(state.settled).toBe(false);

    await clock.advance(SLOW_MS - 1);
    for (let i = 0; i < 5; i++) await turn();
    expect(state.settled).toBe(false);

    await clock.advance(1);
    const reply = await pending;
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ reference: "shp-000001", replayed: false });
  });

  it("slow: stops waiting when the caller gives up, leaving no sleeper on the clock", async () => {
    const partner = await start({ faults: { slow: 1 } });
    const caller = new AbortController();
    const pending = fetch(`${partner.url}/operations/chargePayment`, {
      method: "POST",
      headers: { "Idempotency-Key": "k" },
      body: JSON.stringify({ orderId: "o" }),
      signal: caller.signal,
    });
    pending.catch(() => {});
    await until(() => clock.pendingSleeps === 1);
    caller.abort();
    await expect(pending).rejects.toThrow();
    await until(() => clock.pendingSleeps === 0);
    expect(partner.ledger().effects).toBe(1);
  });

  it("slow faults do not reach undo calls", async () => {
    const partner = await start({ faults: { slow: 1 } });
    const reply = await post(partner, "cancelShipment", "c", { orderId: "o", reference: "shp-000001" });
    expect(reply.status).toBe(200);
    expect(clock.pendingSleeps).toBe(0);
  });

  it("lostReply: applies the effect, drops the connection, and replays the same reference on retry", async () => {
    const partner = await start({ faults: { lostReply: 1 } });
    await expect(post(partner, "chargePayment", "o:charge", { orderId: "o" })).rejects.toThrow();
    const ledger = partner.ledger();
    expect(ledger).toMatchObject({ effects: 1, lostReplies: 1 });
    const reference = ledger.effectLog[0]?.reference;
    expect(reference).toBe("pay-000001");

    partner.setFaults(NO_FAULTS);
    const retry = await post(partner, "chargePayment", "o:charge", { orderId: "o" });
    expect(retry.body).toEqual({ operation: "chargePayment", orderId: "o", reference, replayed: true });
    expect(partner.ledger()).toMatchObject({ calls: 2, effects: 1, duplicateEffects: 0 });
  });

  it("decides the same outcomes for the same seed and keys whatever the request order", async () => {
    const faults = { transient: 0.2, permanent: 0.2, lostReply: 0.2 };
    const keys = Array.from({ length: 60 }, (_, i) => `ord-${i}:chargePayment`);
    const inOrder = await start({ faults, seed: 7 });
    const shuffled = await start({ faults, seed: 7 });

    const sequential = new Map<string, string[]>();
    for (const key of keys) {
      sequential.set(key, [
        await outcome(inOrder, "chargePayment", key, key),
        await outcome(inOrder, "chargePayment", key, key),
      ]);
    }
    const concurrent = new Map<string, string[]>();
    await Promise.all(
      [...keys].reverse().map(async (key) => {
        const first = await outcome(shuffled, "chargePayment", key, key);
        concurrent.set(key, [first, await outcome(shuffled, "chargePayment", key, key)]);
      }),
    );

    expect(Object.fromEntries(concurrent)).toEqual(Object.fromEntries(sequential));
    const seen = new Set([...sequential.values()].flat());
    for (const status of seen) expect(["200", "422", "503", "429", "network-error"]).toContain(status);
    expect(seen.size).toBeGreaterThanOrEqual(4);
    expect(
      inOrder
        .ledger()
        .effectLog.map((e) => e.idempotencyKey)
        .sort(),
    ).toEqual(
      shuffled
        .ledger()
        .effectLog.map((e) => e.idempotencyKey)
        .sort(),
    );
  });

  it("decides different outcomes for a different seed", async () => {
    const keys = Array.from({ length: 200 }, (_, i) => `ord-${i}:reserveInventory`);
    const failedKeys = async (seed: number) => {
      const partner = await start({ faults: { transient: 0.5 }, seed });
      const statuses = await Promise.all(keys.map((key) => outcome(partner, "reserveInventory", key, key)));
      return new Set(keys.filter((_, i) => statuses[i] !== "200"));
    };
    const one = await failedKeys(1);
    const two = await failedKeys(2);
    expect(one.size).toBeGreaterThan(70);
    expect(one.size).toBeLessThan(130);
    const disagreements = keys.filter((key) => one.has(key) !== two.has(key));
    expect(disagreements.length).toBeGreaterThan(50);
  });

  it.each([
    [{ transient: -0.1 }, /faults\.transient/],
    [{ slow: 1.5 }, /faults\.slow/],
    [{ lostReply: Number.NaN }, /faults\.lostReply/],
    [{ transient: 0.6, permanent: 0.5 }, /faults: .*at most 1, got 1\.1/],
    [{ flaky: 0.1 } as never, /faults\.flaky is not a fault kind/],
  ])("rejects the fault rates %o with a RangeError naming the option", async (faults, message) => {
    const attempt = startPartnerService({ faults, clock: new VirtualClock(), logger: new MemoryLogger() });
    await expect(attempt).rejects.toThrow(RangeError);
    await expect(attempt).rejects.toThrow(message);
  });

  it("accepts rates that add up to exactly 1 and validates rates given to setFaults", async () => {
    const partner = await start({ faults: { transient: 0.1, permanent: 0.2, slow: 0.3, lostReply: 0.4 } });
    expect(() => partner.setFaults({ permanent: 2 })).toThrow(/faults\.permanent/);
    await expect(startPartnerService({ clock, logger, seed: 1.5 })).rejects.toThrow(/seed/);
    await expect(startPartnerService({ clock, logger, slowMs: -1 })).rejects.toThrow(/slowMs/);
  });
});

describe("lifecycle", () => {
  it("forgets keys, effects and counters on reset", async () => {
    const partner = await start();
    await post(partner, "chargePayment", "k", { orderId: "o" });
    partner.reset();
    expect(partner.ledger()).toMatchObject({ calls: 0, effects: 0 });
    const again = await post(partner, "chargePayment", "k", { orderId: "o" });
    expect(again.body).toMatchObject({ reference: "pay-000001", replayed: false });
  });

  it("frees its port on close, even with a slow answer pending", async () => {
    const partner = await start({ faults: { slow: 1 } });
    const port = Number(new URL(partner.url).port);
    const pending = post(partner, "chargePayment", "k", { orderId: "o" });
    pending.catch(() => {});
    await until(() => clock.pendingSleeps === 1);

    await partner.close();
    await partner.close();
    await expect(pending).rejects.toThrow();
    expect(clock.pendingSleeps).toBe(0);
    await expect(fetch(`${partner.url}/operations/chargePayment`, { method: "POST" })).rejects.toThrow();

    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen(port, "127.0.0.1", resolve);
    });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });
});

describe("durability", () => {
  /** A journal whose events become durable only when the test says so. */
  function gatedJournal() {
    const events: LedgerEvent[] = [];
    const gate = { durable: Promise.resolve(), open: () => {}, fail: (_: Error) => {} };
    const close = () => {
      gate.durable = new Promise<void>((resolve, reject) => {
        gate.open = resolve;
        gate.fail = reject;
      });
      gate.durable.catch(() => {});
    };
    const journal: LedgerJournal = {
      append: (event) => events.push(event),
      clear: () => {},
      durable: () => gate.durable,
    };
    return { events, gate, close, ledger: new Ledger(journal) };
  }

  it("answers a call and a control change only once their events are durable", async () => {
    const { events, gate, close, ledger } = gatedJournal();
    const partner = await start({ ledger });
    close();
    const pending = post(partner, "chargePayment", "k", { orderId: "o" });
    const call = track(pending);
    await until(() => events.some((event) => event.kind === "effect"));
    const change = partner.startOutage(60);
    const changed = track(change);
    for (let i = 0; i < 20; i++) await turn();
    expect([call.settled, changed.settled]).toEqual([false, false]);

    gate.open();
    expect((await pending).status).toBe(200);
    expect((await change).outage).not.toBeNull();
    expect(events.map((event) => event.kind)).toEqual(["control", "call", "effect", "control"]);
  });

  it("answers 500 when its events could not be made durable", async () => {
    const { gate, close, ledger } = gatedJournal();
    const partner = await start({ ledger });
    close();
    const pending = post(partner, "chargePayment", "k", { orderId: "o" });
    await until(() => logger.events("partner.call").length === 1);
    gate.fail(new Error("the journal is unreachable"));
    const reply = await pending;
    expect(reply.status).toBe(500);
    expect(reply.body.message).toContain("the journal is unreachable");
  });
});
