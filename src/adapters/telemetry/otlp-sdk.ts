import { metrics, trace } from "@opentelemetry/api";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { INSTRUMENTATION_SCOPE, type Telemetry } from "../../telemetry/telemetry.js";

export interface TelemetrySdk {
  readonly telemetry: Telemetry;
  /** Where the spans and metrics go, for the start-up banner. */
  readonly destination: string;
  /** Exports what is buffered and stops; the host calls it on shutdown. */
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK with OTLP/HTTP exporters to the collector at `endpoint` (validated by
 * `loadOtlpSettings`): spans to `<endpoint>/v1/traces`, batched; metrics to `<endpoint>/v1/metrics`
 * every `exportIntervalMs`, as the OTLP specification derives them from the base endpoint.
 */
export function startOtlpTelemetry(
  settings: { readonly endpoint: string; readonly serviceName: string },
  exportIntervalMs = 15_000,
): TelemetrySdk {
  const { endpoint } = settings;
  const resource = resourceFromAttributes({ "service.name": settings.serviceName });
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: signalUrl(endpoint, "traces") }))],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: signalUrl(endpoint, "metrics") }),
        exportIntervalMillis: exportIntervalMs,
      }),
    ],
  });
  // Registered globally too, so libraries that trace through the global API join the same traces.
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    telemetry: {
      tracer: tracerProvider.getTracer(INSTRUMENTATION_SCOPE),
      meter: meterProvider.getMeter(INSTRUMENTATION_SCOPE),
    },
    destination: `OTLP/HTTP at ${endpoint}`,
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** `<endpoint>/v1/<signal>`, with or without a trailing slash on the endpoint. */
function signalUrl(endpoint: string, signal: "traces" | "metrics"): string {
  return `${endpoint.replace(/\/+$/, "")}/v1/${signal}`;
}
