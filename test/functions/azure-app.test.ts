import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { triggerOf } from "../../laptop/worker/registration-capture.js";
import { MAX_PARKED_BODY_DEPTH } from "../../src/adapters/functions-host/settle.js";
import { CONNECTION_NAMES, QUEUE_NAMES, TIMER_SCHEDULE_SETTINGS } from "../../src/config/names.js";
import { WORKFLOWS } from "../../src/domain/workflow.js";
import { FUNCTION_NAMES } from "../../src/functions/function-names.js";
import { ORDER_ACTIVITIES, ORDER_PROCESSING } from "../../src/orchestrators/order-contracts.js";
import { DEAD_LETTER_REASONS } from "../../src/scheduler/submission.js";
import { AppUnderTest, order, succeeded } from "../support/azure-app-under-test.js";
import { pendingRecord } from "../support/records.js";

let app: AppUnderTest;
beforeEach(async () => {
  app = new AppUnderTest();
  await app.open();
});
afterEach(async () => {
  await app.close();
});

describe("Azure app registrations", () => {
  it("registers each function with the trigger, queue, schedule, connection and authorization level it needs", () => {
    const summary = Object.fromEntries(
      app.registry.all().map((fn) => {
        const trigger = triggerOf(fn);
        const { type, queueName, connection, schedule, authLevel, route, methods } =
          trigger ?? ({} as Record<string, unknown>);
        return [fn.name, { type, queueName, connection, schedule, authLevel, route, methods }];
      }),
    );
    const sb = CONNECTION_NAMES.serviceBus;
    expect(summary).toMatchObject({
      [FUNCTION_NAMES.submitOrder]: {
        type: "serviceBusTrigger",
        queueName: QUEUE_NAMES.orders,
        connection: sb,
      },
      [FUNCTION_NAMES.agentWorker]: {
        type: "serviceBusTrigger",
        queueName: QUEUE_NAMES.agentRequests,
        connection: sb,
      },
      [FUNCTION_NAMES.agentReplies]: {
        type: "serviceBusTrigger",
        queueName: QUEUE_NAMES.agentResponses,
        connection: sb,
      },
      [FUNCTION_NAMES.starter]: { type: "timerTrigger", schedule: `%${TIMER_SCHEDULE_SETTINGS.starter}%` },
      [FUNCTION_NAMES.supervisor]: {
        type: "timerTrigger",
        schedule: `%${TIMER_SCHEDULE_SETTINGS.supervisor}%`,
      },
      [FUNCTION_NAMES.retention]: {
        type: "timerTrigger",
        schedule: `%${TIMER_SCHEDULE_SETTINGS.retention}%`,
      },
      [FUNCTION_NAMES.postOrder]: {
        type: "httpTrigger",
        authLevel: "function",
        route: "orders",
        methods: ["POST"],
      },
      [FUNCTION_NAMES.listOrders]: {
        type: "httpTrigger",
        authLevel: "function",
        route: "orders",
        methods: ["GET"],
      },
      [FUNCTION_NAMES.getStats]: {
        type: "httpTrigger",
        authLevel: "function",
        route: "stats",
        methods: ["GET"],
      },
      [FUNCTION_NAMES.dashboard]: {
        type: "httpTrigger",
        authLevel: "function",
        route: "dashboard/{file?}",
        methods: ["GET"],
      },
      [FUNCTION_NAMES.getOrderHistory]: {
        type: "httpTrigger",
        authLevel: "function",
        route: "orders/{orderId}/history",
        methods: ["GET"],
      },
      [FUNCTION_NAMES.getOrder]: {
        type: "httpTrigger",
        authLevel: "function",
        route: "orders/{orderId}",
        methods: ["GET"],
      },
      [FUNCTION_NAMES.resubmitOrder]: {
        type: "httpTrigger",
        authLevel: "admin",
        route: "orders/{orderId}/resubmit",
        methods: ["POST"],
      },
      [FUNCTION_NAMES.compensateOrder]: {
        type: "httpTrigger",
        authLevel: "admin",
        route: "orders/{orderId}/compensate",
        methods: ["POST"],
      },
      // The partner's controls: the state behind a function key, each change behind the admin key.
      [FUNCTION_NAMES.getPartner]: {
        type: "httpTrigger",
        authLevel: "function",
        route: "partner",
        methods: ["GET"],
      },
      [FUNCTION_NAMES.setPartnerFaults]: {
        type: "httpTrigger",
        authLevel: "admin",
        route: "partner/faults",
        methods: ["POST"],
      },
      [FUNCTION_NAMES.startPartnerOutage]: {
        type: "httpTrigger",
        authLevel: "admin",
        route: "partner/outage",
        methods: ["POST"],
      },
      [FUNCTION_NAMES.endPartnerOutage]: {
        type: "httpTrigger",
        authLevel: "admin",
        route: "partner/outage",
        methods: ["DELETE"],
      },
      // One orchestration per workflow version still in use.
      [ORDER_PROCESSING]: { type: "orchestrationTrigger" },
      orderProcessingV2: { type: "orchestrationTrigger" },
    });
    const activities = Object.values(ORDER_ACTIVITIES).map((contract) => contract.name);
    for (const activity of activities) expect(summary[activity]).toMatchObject({ type: "activityTrigger" });
    expect(Object.keys(summary)).toHaveLength(18 + WORKFLOWS.length + activities.length);
  });

  it("gives a durable client input to exactly the functions that start, signal, read or purge orchestrations, settling activities included", () => {
    const withClient = app.registry
      .all()
      .filter((fn) => Object.values(fn.metadata.bindings).some((b) => b.type === "durableClient"))
      .map((fn) => fn.name)
      .sort();
    expect(withClient).toEqual(
      [
        FUNCTION_NAMES.agentReplies,
        FUNCTION_NAMES.retention,
        FUNCTION_NAMES.starter,
        FUNCTION_NAMES.submitOrder,
        // Reads an expired attempt's orchestration: was its host down?
        FUNCTION_NAMES.supervisor,
        ORDER_ACTIVITIES.advance.name,
        ORDER_ACTIVITIES.runStep.name,
        ORDER_ACTIVITIES.startAttempt.name,
        ORDER_ACTIVITIES.fail.name,
        ORDER_ACTIVITIES.deferStep.name,
        ORDER_ACTIVITIES.beginCompensation.name,
      ].sort(),
    );
  });

  it("uses peek-lock: no Service Bus trigger turns off settlement by the host", () => {
    for (const fn of app.registry.withTrigger("serviceBusTrigger")) {
      expect(triggerOf(fn)?.autoCompleteMessages, fn.name).not.toBe(false);
    }
  });
});

describe("Azure app handlers", () => {
  it("takes an order from the orders-queue trigger to Processed through the registered orchestration", async () => {
    await app.invoke(FUNCTION_NAMES.submitOrder, order("ord-1"), {
      messageId: "m-1",
      deliveryCount: 1,
      enqueuedTimeUtc: "2026-01-01T00:00:00Z",
    });
    await app.runtime.idle();
    const record = await app.states.get("ord-1");
    expect(record?.processState).toBe("Processed");
    expect(app.agentCalls.map((r) => r.step)).toEqual([
      "reserveInventory",
      "chargePayment",
      "arrangeShipment",
      "notifyCustomer",
    ]);
    const statuses = await app.queue(QUEUE_NAMES.orderStatus).peek(10);
    expect(statuses.map((m) => m.subject)).toContain("completed");
  });

  it("admits the next order as soon as one leaves Processing, without waiting for the starter's timer", async () => {
    const capped = new AppUnderTest({ MAX_IN_FLIGHT: "1" });
    await capped.open();
    try {
      await capped.invoke(FUNCTION_NAMES.submitOrder, order("ord-a"), { messageId: "m-a" });
      await capped.invoke(FUNCTION_NAMES.submitOrder, order("ord-b"), { messageId: "m-b" });
      expect((await capped.states.get("ord-b"))?.processState).toBe("Pending");
      await capped.runtime.idle();
      expect((await capped.states.get("ord-a"))?.processState).toBe("Processed");
      expect((await capped.states.get("ord-b"))?.processState).toBe("Processed");
    } finally {
      await capped.close();
    }
  });

  it("completes an accepted message even when the starter run it nudged fails; the timer's next run admits it", async () => {
    const countProcessing = app.states.countProcessing.bind(app.states);
    app.states.countProcessing = async () => {
      throw new Error("state store unavailable");
    };
    await expect(
      app.invoke(FUNCTION_NAMES.submitOrder, order("ord-n"), { messageId: "m-n" }),
    ).resolves.toBeUndefined();
    expect((await app.states.get("ord-n"))?.processState).toBe("Pending");
    expect(app.logger.events("starter.error")).toHaveLength(1);
    app.states.countProcessing = countProcessing;
    await app.invoke(FUNCTION_NAMES.starter, {});
    await app.runtime.idle();
    expect((await app.states.get("ord-n"))?.processState).toBe("Processed");
  });

  it("moves a refused order message to the invalid-messages queue with its reason, and completes it", async () => {
    await app.invoke(FUNCTION_NAMES.submitOrder, JSON.stringify({ orderId: "bad" }), { messageId: "m-bad" });
    const [parked] = await app.queue(QUEUE_NAMES.invalidMessages).peek(10);
    expect(parked?.applicationProperties).toMatchObject({
      DeadLetterReason: DEAD_LETTER_REASONS.invalid,
      sourceQueue: QUEUE_NAMES.orders,
      sourceMessageId: "m-bad",
    });
    expect(await app.states.get("bad")).toBeUndefined();
  });

  it("parks a message whose body is a JSON string holding an order's JSON, as the embedded host refuses it", async () => {
    // Sent as the JSON string of the order's text; the worker decodes that string and hands it over.
    const text = JSON.stringify(order("ord-twice"));
    await app.invoke(FUNCTION_NAMES.submitOrder, JSON.stringify(text), { messageId: "m-twice" });
    const [parked] = await app.queue(QUEUE_NAMES.invalidMessages).peek(10);
    expect(parked?.applicationProperties).toMatchObject({
      DeadLetterReason: DEAD_LETTER_REASONS.invalid,
      DeadLetterErrorDescription: "invalid order message: (message): must be a JSON object",
    });
    expect(await app.states.get("ord-twice")).toBeUndefined();
  });

  it("parks a message nested too deep to serialise again, with its reason and without its body", async () => {
    // As the worker hands over a JSON body another client wrote: parsed, twenty thousand arrays deep.
    const deep = JSON.parse(`${"[".repeat(20_000)}${"]".repeat(20_000)}`) as unknown;
    await app.invoke(FUNCTION_NAMES.submitOrder, deep, { messageId: "m-deep" });
    const [parked] = await app.queue(QUEUE_NAMES.invalidMessages).peek(10);
    expect(parked?.body).toBeNull();
    expect(parked?.applicationProperties).toMatchObject({
      DeadLetterReason: DEAD_LETTER_REASONS.invalid,
      DeadLetterErrorDescription: "invalid order message: (message): must be a JSON object",
      sourceMessageId: "m-deep",
      bodyDropped: expect.stringContaining("could not be serialised"),
    });
  });

  it("parks a body nested past the limit without it, however deep the stack it is sent from can go", async () => {
    // A thousand arrays deep serialises here, but may not inside the client's send on another Node.js.
    const nested = (depth: number) => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`) as unknown;
    await app.invoke(FUNCTION_NAMES.submitOrder, nested(1_000), { messageId: "m-1000" });
    await app.invoke(FUNCTION_NAMES.submitOrder, nested(MAX_PARKED_BODY_DEPTH), { messageId: "m-limit" });
    const parked = await app.queue(QUEUE_NAMES.invalidMessages).peek(10);
    const byId = new Map(parked.map((m) => [m.applicationProperties.sourceMessageId, m]));
    expect(byId.get("m-1000")?.body).toBeNull();
    expect(byId.get("m-1000")?.applicationProperties.bodyDropped).toBe(
      `the body could not be serialised: it is nested more than ${MAX_PARKED_BODY_DEPTH} levels deep`,
    );
    expect(byId.get("m-limit")?.body).toEqual(nested(MAX_PARKED_BODY_DEPTH));
    expect(byId.get("m-limit")?.applicationProperties.bodyDropped).toBeUndefined();
  });

  it("parks a conflicting resend without overwriting the accepted order", async () => {
    await app.invoke(FUNCTION_NAMES.submitOrder, order("ord-2"), { messageId: "m-2" });
    await app.invoke(FUNCTION_NAMES.submitOrder, order("ord-2", { customerId: "someone-else" }), {
      messageId: "m-3",
    });
    const parked = await app.queue(QUEUE_NAMES.invalidMessages).peek(10);
    expect(parked.map((m) => m.applicationProperties.DeadLetterReason)).toEqual([
      DEAD_LETTER_REASONS.conflict,
    ]);
    expect((await app.orders.get("ord-2"))?.customerId).toBe("cust-1");
    await app.runtime.idle();
    expect((await app.states.get("ord-2"))?.processState).toBe("Processed");
  });

  it("answers the HTTP API through the shared orders API: 202 and a queued message, then the record", async () => {
    const post = (await app.invoke(FUNCTION_NAMES.postOrder, {
      headers: new Headers({ "content-length": "10" }),
      text: async () => JSON.stringify(order("ord-3")),
    })) as { status: number; jsonBody: { statusUrl: string } };
    expect(post.status).toBe(202);
    const [queued] = await app.queue(QUEUE_NAMES.orders).peek(1);
    expect(queued?.messageId).toMatch(/^ord-3:[0-9a-f]{16}$/);

    const missing = (await app.invoke(FUNCTION_NAMES.getOrder, {
      url: "http://localhost:7071/api/orders/ord-3",
    })) as { status: number };
    expect(missing.status).toBe(404);
    await app.invoke(FUNCTION_NAMES.submitOrder, queued?.body, { messageId: queued?.messageId });
    const found = (await app.invoke(FUNCTION_NAMES.getOrder, {
      url: "http://localhost:7071/api/orders/ord-3",
    })) as { status: number; jsonBody: { orderId: string } };
    expect(found).toMatchObject({ status: 200, jsonBody: { orderId: "ord-3" } });
  });

  it("refuses a submission with 429 while the Pending backlog is at MAX_PENDING, counting it at most once a second", async () => {
    const full = new AppUnderTest({ MAX_PENDING: "1" });
    await full.open();
    try {
      await full.states.createIfAbsent(pendingRecord("ord-waiting"));
      const submit = async () =>
        (await full.invoke(FUNCTION_NAMES.postOrder, {
          headers: new Headers({ "content-length": "10" }),
          text: async () => JSON.stringify(order("ord-next")),
        })) as { status: number; headers?: Record<string, string> };
      expect(await submit()).toMatchObject({ status: 429, headers: { "Retry-After": "5" } });
      expect(await full.queue(QUEUE_NAMES.orders).peek(1)).toEqual([]);
      const waiting = await full.states.get("ord-waiting");
      if (!waiting) throw new Error("ord-waiting is missing");
      await full.states.replace({ ...waiting, processState: "Processed" }, waiting._etag);
      expect((await submit()).status).toBe(429); // the count is a second old at most
      await full.clock.advance(1_000);
      expect((await submit()).status).toBe(202);
    } finally {
      await full.close();
    }
  });

  /** `GET /api/dashboard` without a file, or `/api/dashboard/{file}` with the route parameter the host gives. */
  async function dashboard(file?: string) {
    return (await app.invoke(FUNCTION_NAMES.dashboard, {
      url: `http://localhost:7071/api/dashboard${file === undefined ? "" : `/${file}`}`,
      params: file === undefined ? {} : { file },
    })) as { status: number; headers?: Record<string, string>; body?: string; jsonBody?: unknown };
  }

  it("serves the dashboard page, whose API calls carry the key it was opened with", async () => {
    const answer = await dashboard();
    expect(answer.status).toBe(200);
    expect(answer.headers?.["Content-Type"]).toBe("text/html; charset=utf-8");
    expect(answer.body).toContain("<title>Orders · Scheduler Agent Supervisor</title>");
    // The page's code is its script, beside it.
    expect((await dashboard("dashboard.js")).body).toContain('"x-functions-key": code');
  });

  it("serves the page's style and code through the same function, asked for with the page's key", async () => {
    const page = (await dashboard()).body ?? "";
    expect(page).toContain('get("code")');
    expect(page).toContain("/api/dashboard/dashboard.css");
    expect(page).toContain("/api/dashboard/dashboard.js");
    const style = await dashboard("dashboard.css");
    expect([style.status, style.headers?.["Content-Type"]]).toEqual([200, "text/css; charset=utf-8"]);
    const script = await dashboard("dashboard.js");
    expect([script.status, script.headers?.["Content-Type"]]).toEqual([
      200,
      "text/javascript; charset=utf-8",
    ]);
  });

  it("serves no other file of the package: an unknown name or a way out of web/dashboard/ is 404", async () => {
    for (const file of ["other.js", "..", "../../package.json", "..\\..\\package.json", "%2e%2e"]) {
      const answer = await dashboard(file);
      expect([answer.status, answer.body], file).toEqual([404, undefined]);
    }
  });

  it("refuses an oversized order body with 413 before reading it", async () => {
    let read = false;
    const answer = (await app.invoke(FUNCTION_NAMES.postOrder, {
      headers: new Headers({ "content-length": String(10_000_000) }),
      text: async () => {
        read = true;
        return "";
      },
    })) as { status: number };
    expect(answer.status).toBe(413);
    expect(read).toBe(false);
  });

  it("runs the Agent's queue form: the worker replies on the response queue, the reply handler raises the event", async () => {
    await app.invoke(FUNCTION_NAMES.agentWorker, { not: "a request" }, { messageId: "r-bad" });
    const [parked] = await app.queue(QUEUE_NAMES.invalidMessages).peek(1);
    expect(parked?.applicationProperties.sourceQueue).toBe(QUEUE_NAMES.agentRequests);

    const reply = succeeded(
      {
        schemaVersion: 2,
        requestId: "ord-9:1:reserveInventory",
        orderId: "ord-9",
        attempt: 1,
        step: "reserveInventory",
        operation: "do",
        instanceId: "ord-9:1",
        idempotencyKey: "ord-9:reserveInventory",
        replyEvent: "reply:reserveInventory:do",
        completeBy: "2026-01-01T00:01:00.000Z",
        maxCalls: 3,
        reference: null,
      },
      app.clock.now(),
    );
    await app.invoke(FUNCTION_NAMES.agentReplies, reply, { messageId: "reply-1" });
    expect(app.logger.lines.some((l) => l.event === "agent.reply.dropped" && l.reason === "notFound")).toBe(
      true,
    );
  });

  it("runs the Supervisor from its timer under the lease", async () => {
    await expect(app.invoke(FUNCTION_NAMES.supervisor, {})).resolves.toBeUndefined();
    expect(app.logger.lines.some((l) => l.event.startsWith("supervisor."))).toBe(true);
  });
});
