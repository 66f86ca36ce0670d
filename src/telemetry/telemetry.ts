import {
  type Attributes,
  type Context,
  isSpanContextValid,
  type Link,
  type Meter,
  metrics,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { isTraceparent } from "../domain/trace-context.js";

/** The instrumentation scope every span and instrument of this app is created under. */
export const INSTRUMENTATION_SCOPE = "scheduler-agent-supervisor";

/**
 * Where spans and measurements go. Handlers take it as a dependency; the composition roots decide
 * what is behind it (an SDK with exporters, or the API's no-ops).
 */
export interface Telemetry {
  readonly tracer: Tracer;
  readonly meter: Meter;
}

/**
 * The globally registered providers: no-ops unless a composition root registered an SDK (in Azure,
 * the Azure Monitor distro does). Asked on each call, so a registration after start-up is seen.
 */
export function globalTelemetry(): Telemetry {
  return {
    tracer: trace.getTracer(INSTRUMENTATION_SCOPE),
    meter: metrics.getMeter(INSTRUMENTATION_SCOPE),
  };
}

/** The context a `traceparent` names, to start a child span in; the root context for none or a bad one. */
export function contextFrom(traceparent: string | null | undefined): Context {
  if (!isTraceparent(traceparent)) return ROOT_CONTEXT;
  const [, traceId = "", spanId = "", flags = "00"] = traceparent.split("-");
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16),
    isRemote: true,
  });
}

/** The `traceparent` that makes later work a child of `span`; null for the no-op API's spans. */
export function traceparentOf(span: Span): string | null {
  const context = span.spanContext();
  if (!isSpanContextValid(context)) return null;
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/** The context to start children of `span` in. */
export function contextOf(span: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, span);
}

export interface SpanOptions {
  readonly kind: SpanKind;
  readonly parent: Context;
  readonly attributes?: Attributes;
  readonly links?: readonly Link[];
  readonly startTime?: Date;
}

export function startSpan(tracer: Tracer, name: string, options: SpanOptions): Span {
  return tracer.startSpan(
    name,
    {
      kind: options.kind,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.links ? { links: [...options.links] } : {}),
      ...(options.startTime ? { startTime: options.startTime } : {}),
    },
    options.parent,
  );
}

/**
 * Runs `work` in a new span and ends it, both times read from `clock` when one is given (the virtual
 * one in tests, so spans agree with what the logs and records say). A throw marks the span as an error with the exception
 * recorded, and is rethrown; `work` may set attributes and status on the span itself.
 */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  options: Omit<SpanOptions, "startTime"> & { readonly clock?: { now(): Date } },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const clock = options.clock;
  const span = startSpan(tracer, name, clock ? { ...options, startTime: clock.now() } : options);
  try {
    return await work(span);
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    span.end(clock?.now());
  }
}

export function markFailed(span: Span, error: unknown): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
}

export {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
} from "@opentelemetry/api";
