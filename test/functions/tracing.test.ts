import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../src/config/names.js";
import { FUNCTION_NAMES } from "../../src/functions/function-names.js";
import { AppUnderTest, order } from "../support/azure-app-under-test.js";
import { parentOf, type RecordedTelemetry, recordTelemetry, spansNamed } from "../support/telemetry.js";

const HOST_TRACE = "0af7651916cd43dd8448eb211c80319c";
const HOST_SPAN = "b7ad6b7169203331";

let app: AppUnderTest | undefined;
let recorded: RecordedTelemetry | undefined;
afterEach(async () => {
  await app?.close();
  await recorded?.shutdown();
});

describe("traces through the Azure app's registered functions", () => {
  it("continues the host's trace of the HTTP request through the queue, the record and the orchestration's input", async () => {
    recorded = recordTelemetry();
    app = new AppUnderTest({}, { telemetry: recorded.telemetry });
    await app.open();
    const posted = (await app.invoke(
      FUNCTION_NAMES.postOrder,
      { headers: new Headers({ "content-length": "10" }), text: async () => JSON.stringify(order("ord-t")) },
      {},
      { traceContext: { traceParent: `00-${HOST_TRACE}-${HOST_SPAN}-01` } },
    )) as { status: number };
    expect(posted.status).toBe(202);
    const [queued] = await app.queue(QUEUE_NAMES.orders).peek(1);
    expect(queued?.applicationProperties.traceparent).toMatch(new RegExp(`^00-${HOST_TRACE}-`));

    // The Service Bus trigger hands the handler the message's application properties.
    await app.invoke(FUNCTION_NAMES.submitOrder, queued?.body, {
      messageId: queued?.messageId,
      applicationProperties: queued?.applicationProperties,
    });
    await app.runtime.idle();
    expect((await app.states.get("ord-t"))?.processState).toBe("Processed");

    const spans = recorded.spans();
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([HOST_TRACE]));
    const [server] = spansNamed(spans, "POST /api/orders");
    expect(server && parentOf(server)).toBe(HOST_SPAN);
    const [submit] = spansNamed(spans, "order.submit");
    expect(submit && parentOf(submit)).toBe(server?.spanContext().spanId);
    const [attempt] = spansNamed(spans, "order.attempt");
    // Every Agent request of the attempt carries the attempt's span as its parent.
    expect(app.agentCalls.length).toBeGreaterThan(0);
    for (const request of app.agentCalls) {
      expect(request.traceparent).toBe(`00-${HOST_TRACE}-${attempt?.spanContext().spanId}-01`);
    }
    expect(spans.some((span) => span.attributes["sas.process_state"] === "Processed")).toBe(true);
  });
});
