/**
 * The Functions host's trace of each invocation, made the worker's active context while the handler runs, as
 * Microsoft's OpenTelemetry guide for Azure Functions has the worker do (its
 * `@azure/functions-opentelemetry-instrumentation` registers the same hook): what the worker traces in the active
 * context (the Azure SDKs' and HTTP spans the distro instruments) is then a child of the host's invocation span,
 * in the host's trace. The app's own spans keep their explicit parents, the order's trace (docs/observability.md).
 *
 * The host's `traceParent` is read here rather than through the global propagator, which only an SDK registers;
 * the binding needs the context manager an SDK registers (the Azure Monitor distro does).
 */
import type { PreInvocationHandler } from "@azure/functions";
import { context } from "@opentelemetry/api";
import { contextFrom } from "../../telemetry/telemetry.js";

/** The part of `app.hook` of `@azure/functions` this needs. */
export interface InvocationHooks {
  preInvocation(handler: PreInvocationHandler): { dispose(): void };
}

/** Runs every invocation's handler in the context of the host's span of that invocation, when it names one. */
export function runInvocationsInHostTrace(hooks: InvocationHooks): { dispose(): void } {
  return hooks.preInvocation((invocation) => {
    const traceParent = invocation.invocationContext.traceContext?.traceParent;
    if (!traceParent) return;
    invocation.functionHandler = context.bind(contextFrom(traceParent), invocation.functionHandler);
  });
}
