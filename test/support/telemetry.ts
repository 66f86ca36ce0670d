import type { Attributes } from "@opentelemetry/api";
import {
  AggregationTemporality,
  type DataPoint,
  MeterProvider,
  MetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { Telemetry } from "../../src/telemetry/telemetry.js";

/** A reader that exports only when a test asks it to collect. */
class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

export interface RecordedTelemetry {
  readonly telemetry: Telemetry;
  /** Every span ended so far. */
  spans(): readonly ReadableSpan[];
  /** The data points of one metric now (observable instruments are observed by this call). */
  points(metric: string): Promise<readonly DataPoint<unknown>[]>;
  shutdown(): Promise<void>;
}

/** The OpenTelemetry SDK with an in-memory span exporter and an on-demand metric reader. */
export function recordTelemetry(): RecordedTelemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    telemetry: { tracer: tracerProvider.getTracer("test"), meter: meterProvider.getMeter("test") },
    spans: () => exporter.getFinishedSpans(),
    async points(metric) {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((m) => m.descriptor.name === metric)
        .flatMap((m) => m.dataPoints as DataPoint<unknown>[]);
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** The spans named `name` (all of them, in the order they ended). */
export function spansNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

export function withAttributes(spans: readonly ReadableSpan[], attributes: Attributes): ReadableSpan[] {
  return spans.filter((span) =>
    Object.entries(attributes).every(([key, value]) => span.attributes[key] === value),
  );
}
