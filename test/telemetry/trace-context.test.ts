import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { isTraceparent } from "../../src/domain/trace-context.js";
import { contextFrom, SpanKind, startSpan, traceparentOf } from "../../src/telemetry/telemetry.js";
import { recordTelemetry } from "../support/telemetry.js";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("trace context carried as data", () => {
  it("accepts a W3C traceparent and refuses what a propagator would refuse", () => {
    expect(isTraceparent(VALID)).toBe(true);
    for (const bad of [
      "",
      VALID.toUpperCase(),
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      `${VALID}-extra`,
    ]) {
      expect(isTraceparent(bad), bad).toBe(false);
    }
  });

  it("makes a child of the span a traceparent names, and names the child in turn", async () => {
    const recorded = recordTelemetry();
    const span = startSpan(recorded.telemetry.tracer, "child", {
      kind: SpanKind.INTERNAL,
      parent: contextFrom(VALID),
    });
    span.end();
    const [ended] = recorded.spans();
    expect(ended?.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(ended?.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(traceparentOf(span)).toBe(`00-4bf92f3577b34da6a3ce929d0e0e4736-${span.spanContext().spanId}-01`);
    await recorded.shutdown();
  });

  it("starts a new trace for no traceparent or a malformed one, and names none for the API's no-op spans", () => {
    expect(trace.getSpanContext(contextFrom(null))).toBeUndefined();
    expect(trace.getSpanContext(contextFrom("garbage"))).toBeUndefined();
    const noop = trace.getTracer("none").startSpan("noop");
    expect(traceparentOf(noop)).toBeNull();
  });
});
