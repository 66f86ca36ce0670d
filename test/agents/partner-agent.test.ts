import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { classify, createPartnerAgent } from "../../src/agents/partner-agent.js";
import { SharedBreaker } from "../../src/breaker/shared-breaker.js";
import { loadBreakerSettings } from "../../src/config/breaker-settings.js";
import { AGENT_MESSAGE_SCHEMA_VERSION, type AgentRequest } from "../../src/domain/agent-messages.js";
import { windowTotals } from "../../src/domain/circuit-breaker.js";
import type { Order } from "../../src/domain/order.js";
import {
  isPartnerOperation,
  operationFor,
  PARTNER_OPERATIONS,
  UNDO_OF,
} from "../../src/domain/partner-operations.js";
import { ORDER_STEPS } from "../../src/domain/workflow.js";
import { MemoryBreakerStore, SlowBreakerStore } from "../support/memory-breaker-store.js";
import { sampleOrder } from "../support/records.js";

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function partner(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => handler(req, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function request(clock: VirtualClock, maxCalls = 1): AgentRequest {
  return {
    schemaVersion: AGENT_MESSAGE_SCHEMA_VERSION,
    requestId: "ord-1:1:reserveInventory",
    orderId: "ord-1",
    attempt: 1,
    step: "reserveInventory",
    operation: "do",
    instanceId: "ord-1:1",
    idempotencyKey: "ord-1:reserveInventory",
    replyEvent: "reply.reserveInventory",
    completeBy: new Date(clock.now().getTime() + 60_000).toISOString(),
    maxCalls,
    reference: null,
  };
}

function agentFor(partnerUrl: string, clock: VirtualClock) {
  return createPartnerAgent({
    partnerUrl,
    clock,
    random: () => 0.5,
    logger: new MemoryLogger(),
    backoff: { baseMs: 10, capMs: 10 },
    callTimeoutMs: 1_000,
    orders: ordersOf(sampleOrder()),
  });
}

/** An orders database holding `orders`, counting its reads. */
function ordersOf(...orders: Order[]) {
  const reads: string[] = [];
  return {
    reads,
    get: async (orderId: string) => {
      reads.push(orderId);
      return orders.find((order) => order.orderId === orderId);
    },
  };
}

describe("partner Agent over HTTP", () => {
  it("logs a reservation's reference, never a payment's or a shipment's (data-classification.ts)", async () => {
    const clock = new VirtualClock();
    const url = await partner((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ reference: "ref-77" }));
    });
    const logger = new MemoryLogger();
    const agent = createPartnerAgent({
      partnerUrl: url,
      clock,
      random: () => 0.5,
      logger,
      backoff: { baseMs: 10, capMs: 10 },
      callTimeoutMs: 1_000,
      orders: ordersOf(sampleOrder()),
    });
    for (const step of ["reserveInventory", "chargePayment", "arrangeShipment"] as const) {
      const reply = await agent({ ...request(clock), step, requestId: `ord-1:1:${step}` });
      expect(reply.reference).toBe("ref-77");
    }
    const succeeded = logger.lines.filter((line) => line.event === "agent.call.succeeded");
    expect(succeeded.map((line) => [line.step, line.reference])).toEqual([
      ["reserveInventory", "ref-77"],
      ["chargePayment", undefined],
      ["arrangeShipment", undefined],
    ]);
    expect(JSON.stringify(logger.lines.filter((line) => line.step !== "reserveInventory"))).not.toContain(
      "ref-77",
    );
  });

  it("reports a call that got no answer in time as a transient Timeout", async () => {
    const clock = new VirtualClock();
    const url = await partner(() => undefined);
    const reply = agentFor(url, clock)(request(clock));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await clock.advance(1_000);
    const response = await reply;
    expect(response.outcome).toBe("failed");
    expect(response.fault).toMatchObject({ kind: "transient", code: "Timeout" });
    expect(response.fault?.message).toContain("no answer within 1000 ms");
  });

  it("reports a dropped connection as a transient NetworkError", async () => {
    const clock = new VirtualClock();
    const url = await partner((req) => req.socket.destroy());
    const response = await agentFor(url, clock)(request(clock));
    expect(response.fault).toMatchObject({ kind: "transient", code: "NetworkError" });
  });

  it("sends the idempotency key and takes the reference from a success", async () => {
    const clock = new VirtualClock();
    const keys: unknown[] = [];
    const url = await partner((req, res) => {
      keys.push(req.headers["idempotency-key"]);
      res.end(JSON.stringify({ reference: "res-000001" }));
    });
    const response = await agentFor(url, clock)(request(clock));
    expect(response).toMatchObject({ outcome: "succeeded", reference: "res-000001", callsMade: 1 });
    expect(keys).toEqual(["ord-1:reserveInventory"]);
  });

  it("sends the partner's access key on every call when it has one, and none without", async () => {
    const clock = new VirtualClock();
    const presented: unknown[] = [];
    const url = await partner((req, res) => {
      presented.push(req.headers["x-partner-key"]);
      res.end(JSON.stringify({ reference: "res-000001" }));
    });
    const keyed = createPartnerAgent({
      partnerUrl: url,
      clock,
      random: () => 0.5,
      logger: new MemoryLogger(),
      backoff: { baseMs: 10, capMs: 10 },
      callTimeoutMs: 1_000,
      accessKey: "k-partner-1",
      orders: ordersOf(sampleOrder()),
    });
    await keyed(request(clock));
    await agentFor(url, clock)(request(clock));
    expect(presented).toEqual(["k-partner-1", undefined]);
  });

  it("takes a partner's refusal of its access key as permanent: retrying will not mend a wrong key", () => {
    const refused = classify(403, JSON.stringify({ error: "forbidden", message: "wrong access key" }));
    expect(refused).toMatchObject({ kind: "fault", fault: { kind: "permanent", code: "Http403" } });
  });

  it("reads a step's payload from the order, and sends an undo the reference it names, not the order", async () => {
    const clock = new VirtualClock();
    const calls: { url: string | undefined; body: unknown }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        calls.push({ url: req.url, body: JSON.parse(body) });
        res.end(JSON.stringify({ reference: "pay-1" }));
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const orders = ordersOf(sampleOrder());
    const agent = createPartnerAgent({
      partnerUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      clock,
      random: () => 0.5,
      logger: new MemoryLogger(),
      backoff: { baseMs: 10, capMs: 10 },
      callTimeoutMs: 1_000,
      orders,
    });
    const charge = { ...request(clock), step: "chargePayment" as const, requestId: "ord-1:1:chargePayment" };
    await agent(charge);
    await agent({
      ...charge,
      operation: "undo",
      requestId: "ord-1:1:chargePayment:undo",
      reference: "pay-1",
    });
    expect(calls).toEqual([
      {
        url: "/operations/chargePayment",
        body: { orderId: "ord-1", amountMinor: 2598, currency: "EUR", customerId: "cust-1" },
      },
      { url: "/operations/refundPayment", body: { orderId: "ord-1", reference: "pay-1" } },
    ]);
    expect(orders.reads).toEqual(["ord-1"]);
  });

  it("throws, calling nothing, for a step whose order the orders database does not hold", async () => {
    const clock = new VirtualClock();
    let called = 0;
    const url = await partner((_req, res) => {
      called++;
      res.end("{}");
    });
    const agent = createPartnerAgent({
      partnerUrl: url,
      clock,
      random: () => 0.5,
      logger: new MemoryLogger(),
      backoff: { baseMs: 10, capMs: 10 },
      callTimeoutMs: 1_000,
      orders: ordersOf(),
    });
    await expect(agent(request(clock))).rejects.toThrow("order ord-1 has an Agent request but no order row");
    expect(called).toBe(0);
  });
});

describe("the Agent's partner operations", () => {
  it("are the partner's: each step's effect, and the undo the partner pairs with it, no two alike", () => {
    const called = ORDER_STEPS.flatMap((step) => [operationFor(step, "do"), operationFor(step, "undo")]);
    expect(called.map((operation) => isPartnerOperation(operation))).not.toContain(false);
    expect(new Set(called).size).toBe(PARTNER_OPERATIONS.length);
    for (const step of ORDER_STEPS) expect(operationFor(step, "undo")).toBe(UNDO_OF[step]);
  });
});

describe("classify", () => {
  it.each([
    [408, "transient"],
    [429, "transient"],
    [500, "transient"],
    [503, "transient"],
    [400, "permanent"],
    [409, "permanent"],
    [422, "permanent"],
  ])("HTTP %i is %s", (status, kind) => {
    const result = classify(status, JSON.stringify({ error: "x" }));
    expect(result).toMatchObject({ kind: "fault", fault: { kind, code: `Http${status}` } });
  });
});

describe("F24-2: the Agent with a breaker whose store is slow keeps to its deadline", () => {
  const OP = "reserveInventory";

  /** Advances `clock` in steps, letting real I/O (the partner's HTTP) run in between, until `work` settles. */
  async function onClock<T>(clock: VirtualClock, work: Promise<T>, stepMs = 50, maxMs = 30_000): Promise<T> {
    let settled = false;
    work.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    for (let elapsed = 0; elapsed < maxMs && !settled; elapsed += stepMs) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (!settled) await clock.advance(stepMs);
    }
    return work;
  }

  /** Lets `ms` pass on `clock` in steps, real I/O running in between. */
  async function passes(clock: VirtualClock, ms: number, stepMs = 500): Promise<void> {
    for (let elapsed = 0; elapsed < ms; elapsed += stepMs) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      await clock.advance(stepMs);
    }
  }

  /** A partner answering each call with the next of `statuses` (the last one repeated), counting calls. */
  async function partnerAnswering(...statuses: number[]) {
    const seen = { calls: 0 };
    const url = await partner((_req, res) => {
      const status = statuses[Math.min(seen.calls, statuses.length - 1)] ?? 200;
      seen.calls++;
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ reference: "r-1" }));
    });
    return { url, seen };
  }

  function breakerOver(clock: VirtualClock, delays: { readMs: number; writeMs: number }) {
    const memory = new MemoryBreakerStore();
    const store = new SlowBreakerStore(memory, clock, delays);
    const policy = loadBreakerSettings({});
    const breaker = new SharedBreaker({ store, clock, logger: new MemoryLogger(), policy });
    return { memory, store, breaker, policy };
  }

  function agentWith(url: string, clock: VirtualClock, breaker: SharedBreaker) {
    return createPartnerAgent({
      partnerUrl: url,
      clock,
      random: () => 0.5,
      logger: new MemoryLogger(),
      backoff: { baseMs: 10, capMs: 10 },
      callTimeoutMs: 1_000,
      orders: ordersOf(sampleOrder()),
      breaker,
    });
  }

  it("starts no call when asking the breaker took it past the deadline", async () => {
    const clock = new VirtualClock();
    const { url, seen } = await partnerAnswering(200);
    const { breaker } = breakerOver(clock, { readMs: 2_000, writeMs: 0 });
    const started = clock.now().getTime();
    const ask = { ...request(clock, 3), completeBy: new Date(started + 500).toISOString() };

    const reply = await onClock(clock, agentWith(url, clock, breaker)(ask));
    // The store's read outlasts the deadline: the breaker answers at the deadline, and no call goes out,
    // not even once the read has come back.
    await passes(clock, 3_000);
    expect(seen.calls).toBe(0);
    expect(reply).toMatchObject({ outcome: "failed", callsMade: 0, fault: { code: "DeadlinePassed" } });
    expect(Date.parse(reply.completedAt) - started).toBeLessThanOrEqual(550);
  });

  it("waits for a slow store no longer than the breaker's admit wait, then calls on what it knew", async () => {
    const clock = new VirtualClock();
    const { url, seen } = await partnerAnswering(200);
    const { breaker } = breakerOver(clock, { readMs: 10_000, writeMs: 0 });
    const started = clock.now().getTime();

    const reply = await onClock(clock, agentWith(url, clock, breaker)(request(clock)));
    expect(reply).toMatchObject({ outcome: "succeeded", callsMade: 1 });
    expect(seen.calls).toBe(1);
    // BREAKER_ADMIT_WAIT_MS, 1 s by default, and not the store's 10 s.
    expect(Date.parse(reply.completedAt) - started).toBeLessThanOrEqual(1_050);
  });

  it("hands back a success at once, its outcome and the failure before it written afterwards", async () => {
    const clock = new VirtualClock();
    const { url, seen } = await partnerAnswering(503, 200);
    const { memory, store, breaker, policy } = breakerOver(clock, { readMs: 0, writeMs: 0 });
    // A failure the breaker already knows: the success is due to be written to weigh against it.
    const first = await breaker.admit(OP);
    if (first.decision === "defer") throw new Error("a new breaker deferred");
    await breaker.record(first.ticket, "transient");
    store.delays.writeMs = 10_000;
    const started = clock.now().getTime();
    const ask = { ...request(clock, 2), completeBy: new Date(started + 5_000).toISOString() };

    const reply = await onClock(clock, agentWith(url, clock, breaker)(ask), 10);
    expect(reply).toMatchObject({ outcome: "succeeded", callsMade: 2 });
    expect(seen.calls).toBe(2);
    expect(Date.parse(reply.completedAt) - started).toBeLessThanOrEqual(100);

    await passes(clock, 25_000, 5_000);
    const stored = (await memory.read(OP))?.state;
    expect(stored && windowTotals(stored, clock.now().getTime(), policy)).toEqual({
      calls: 3,
      failures: 2,
    });
  });
});
