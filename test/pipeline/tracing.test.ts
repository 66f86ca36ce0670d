import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpApi } from "../../laptop/embedded/http-api.js";
import { ORDER_STEPS } from "../../src/domain/workflow.js";
import {
  parentOf,
  type RecordedTelemetry,
  recordTelemetry,
  spansNamed,
  withAttributes,
} from "../support/telemetry.js";
import { orderMessage, post, recordOf, runUntil, scenarioPerTest, terminal } from "./pipeline-harness.js";

const openScenario = scenarioPerTest();
let recorded: RecordedTelemetry | undefined;
afterEach(async () => {
  await recorded?.shutdown();
  recorded = undefined;
});

/** The caller's own trace: everything the order causes must join it. */
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spansNamed(spans, name);
  expect(
    found.map((s) => s.name),
    `exactly one ${name}`,
  ).toEqual([name]);
  return found[0] as ReadableSpan;
}

async function submitTraced(url: string, orderId: string): Promise<Response> {
  return fetch(`${url}/api/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    body: JSON.stringify(orderMessage(orderId)),
  });
}

describe.each(["activity", "queue"] as const)("one trace per order, Agent as %s", (agentMode) => {
  it("joins POST /api/orders, submission, claim, attempt, every step and Agent call, up to Processed", async () => {
    recorded = recordTelemetry();
    const s = await openScenario({ AGENT_MODE: agentMode }, { telemetry: recorded.telemetry });
    const api = await startHttpApi({
      port: 0,
      logger: s.logger,
      backend: s.pipeline.apiBackend(),
      telemetry: recorded.telemetry,
    });
    try {
      // One transient fault on the first call: a step with a retried call shows both calls.
      s.partner.setFaults({ transient: 1 });
      expect((await submitTraced(api.url, "ord-traced")).status).toBe(202);
      await runUntil(s, async () => (await s.pipeline.states.get("ord-traced"))?.attempt === 1, {
        stepMs: 5,
      });
      s.partner.setFaults({});
      await runUntil(s, terminal(s, "ord-traced"));
      expect((await recordOf(s, "ord-traced")).processState).toBe("Processed");
    } finally {
      await api.close();
    }

    const spans = recorded.spans();
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([CALLER_TRACE]));

    const server = only(spans, "POST /api/orders");
    expect(parentOf(server)).toBe(CALLER_SPAN);
    expect(server.attributes["http.response.status_code"]).toBe(202);
    const submit = only(spans, "order.submit");
    expect(parentOf(submit)).toBe(server.spanContext().spanId);
    expect(submit.attributes["sas.order.id"]).toBe("ord-traced");
    expect((await recordOf(s, "ord-traced")).traceparent).toContain(submit.spanContext().spanId);
    const claim = only(spans, "order.claim");
    expect(parentOf(claim)).toBe(submit.spanContext().spanId);
    const attempt = only(spans, "order.attempt");
    expect(parentOf(attempt)).toBe(claim.spanContext().spanId);
    expect(attempt.attributes["sas.attempt"]).toBe(1);

    for (const step of ORDER_STEPS) {
      const stepSpan = only(spans, `step ${step} do`);
      expect(parentOf(stepSpan), step).toBe(attempt.spanContext().spanId);
      expect(stepSpan.attributes["sas.outcome"], step).toBe("succeeded");
      const calls = spans.filter((span) => parentOf(span) === stepSpan.spanContext().spanId);
      expect(calls.length, `${step}'s calls`).toBe(stepSpan.attributes["sas.calls_made"]);
      for (const call of calls) {
        expect(call.name).toBe("POST");
        expect(String(call.attributes["url.full"])).toContain(`/operations/${step}`);
      }
    }
    // The transient fault: a failed call and its retry, both under the first step's span.
    const failed = spans.filter(
      (span) => span.name === "POST" && span.attributes["error.type"] !== undefined,
    );
    expect(failed.map((span) => span.attributes["error.type"])).toEqual([
      expect.stringMatching(/^Http(503|429)$/),
    ]);
    expect(only(spans, `step ${ORDER_STEPS[0]} do`).attributes["sas.calls_made"]).toBe(2);
    expect(withAttributes(spans, { "sas.process_state": "Processed" }).length).toBeGreaterThan(0);

    const stepDurations = await recorded.points("sas.step.duration");
    expect(stepDurations).toHaveLength(ORDER_STEPS.length);
    const calls = await recorded.points("sas.agent.calls");
    const byOutcome = Object.fromEntries(
      calls.map((p) => [String(p.attributes["sas.step"]) + p.attributes["sas.outcome"], p.value]),
    );
    expect(byOutcome[`${ORDER_STEPS[0]}transient`]).toBe(1);
    const orders = await recorded.points("sas.orders");
    expect(orders.find((p) => p.attributes["sas.process_state"] === "Processed")?.value).toBe(1);
  });
});

describe("the Supervisor's and the refusals' telemetry", () => {
  it("puts a recovery in the order's trace, linked to the scan that made it, and counts it", async () => {
    recorded = recordTelemetry();
    const s = await openScenario({ PARTNER_CALL_TIMEOUT_MS: "30000" }, { telemetry: recorded.telemetry });
    s.partner.setFaults({ slow: 1 });
    await post(s, orderMessage("ord-late"));
    await runUntil(s, async () => (await recordOf(s, "ord-late").catch(() => undefined))?.attempt === 2, {
      stepMs: 1_000,
    });
    s.partner.setFaults({});
    await runUntil(s, terminal(s, "ord-late"), { stepMs: 1_000 });

    const spans = recorded.spans();
    const submit = only(spans, "order.submit");
    const recovers = spansNamed(spans, "order.recover");
    expect(recovers.length).toBeGreaterThan(0);
    for (const recover of recovers) {
      expect(recover.spanContext().traceId).toBe(submit.spanContext().traceId);
      expect(parentOf(recover)).toBe(submit.spanContext().spanId);
      expect(recover.attributes["sas.recovery"]).toBe("retry");
    }
    const [first] = recovers as [ReadableSpan];
    expect(first.attributes["sas.attempt"]).toBe(1);
    const scans = spansNamed(spans, "supervisor.scan");
    const linked = scans.find((scan) => scan.spanContext().spanId === first.links[0]?.context.spanId);
    expect(linked?.attributes).toMatchObject({ "sas.supervisor.resets": 1 });
    expect(linked?.spanContext().traceId).not.toBe(submit.spanContext().traceId);
    // Every attempt is in the order's trace, each under a claim of its own.
    const attempts = spansNamed(spans, "order.attempt").map((span) => span.attributes["sas.attempt"]);
    expect(attempts).toEqual(Array.from({ length: recovers.length + 1 }, (_, i) => i + 1));

    const recoveries = await recorded.points("sas.supervisor.recoveries");
    expect(recoveries.map((p) => [p.attributes["sas.recovery"], p.value])).toEqual([
      ["retry", recovers.length],
    ]);
    const [scanDurations] = await recorded.points("sas.supervisor.scan.duration");
    expect((scanDurations?.value as { count: number } | undefined)?.count).toBe(scans.length);
  });

  it("counts a refused message by queue and reason, and marks its submission span", async () => {
    recorded = recordTelemetry();
    const s = await openScenario({}, { telemetry: recorded.telemetry });
    await post(s, { schemaVersion: 1, orderId: "" });
    await runUntil(s, async () => (await s.pipeline.ordersQueue.deadLetterQueue.peek(10)).length === 1);

    const submit = only(recorded.spans(), "order.submit");
    expect(submit.status.code).toBe(2); // ERROR
    expect(submit.attributes["sas.dead_letter.reason"]).toBe("InvalidOrderMessage");
    const refused = await recorded.points("sas.messages.dead_lettered");
    expect(
      refused.map((p) => [p.attributes["messaging.destination.name"], p.attributes["sas.reason"], p.value]),
    ).toEqual([["orders", "InvalidOrderMessage", 1]]);
  });
});
