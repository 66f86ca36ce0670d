import type { PreInvocationContext, PreInvocationHandler } from "@azure/functions";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInvocationsInHostTrace } from "../../src/adapters/telemetry/invocation-trace.js";
import { parentOf, recordTelemetry } from "../support/telemetry.js";

const HOST_TRACE = "0af7651916cd43dd8448eb211c80319c";
const HOST_SPAN = "b7ad6b7169203331";

/** Runs `handler` as the Functions worker would, after the pre-invocation hooks registered through `hooks`. */
function invoke(hooks: PreInvocationHandler[], traceParent: string | undefined, handler: () => unknown) {
  const invocation = {
    invocationContext: { traceContext: traceParent ? { traceParent } : undefined },
    functionHandler: handler,
  } as unknown as PreInvocationContext;
  for (const hook of hooks) hook(invocation);
  return (invocation.functionHandler as () => unknown)();
}

describe("F25-5: the worker's spans in the active context are children of the host's invocation span", () => {
  const manager = new AsyncLocalStorageContextManager().enable();
  beforeAll(() => context.setGlobalContextManager(manager));
  afterAll(() => {
    context.disable();
  });

  it("continues the host's trace of the invocation, as a dependency call the distro traces would", async () => {
    const recorded = recordTelemetry();
    const hooks: PreInvocationHandler[] = [];
    runInvocationsInHostTrace({
      preInvocation: (hook) => {
        hooks.push(hook);
        return { dispose: () => undefined };
      },
    });
    expect(hooks).toHaveLength(1);
    await invoke(hooks, `00-${HOST_TRACE}-${HOST_SPAN}-01`, async () => {
      await Promise.resolve();
      recorded.telemetry.tracer.startSpan("GET cosmos").end();
    });
    const [span] = recorded.spans();
    expect(span?.spanContext().traceId).toBe(HOST_TRACE);
    expect(span && parentOf(span)).toBe(HOST_SPAN);
    // Without a trace from the host, the handler runs as it was given.
    const plain = () => trace.getActiveSpan();
    expect(invoke(hooks, undefined, plain)).toBeUndefined();
    await recorded.shutdown();
  });
});
