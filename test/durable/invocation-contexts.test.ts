import { describe, expect, it } from "vitest";
import { invocationContextFor } from "../../laptop/worker/invocation-context.js";
import type { CapturedFunction } from "../../laptop/worker/registration-capture.js";
import type { LogFields, Logger } from "../../src/ports/logger.js";

function activity(name: string): CapturedFunction {
  return {
    name,
    metadata: { name, bindings: { trigger: { type: "activityTrigger", direction: "in", name: "input" } } },
    handler: () => undefined,
  };
}

function recordingLogger(lines: LogFields[]): Logger {
  const logger: Logger = {
    debug: (_event, fields) => lines.push(fields ?? {}),
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
    child: () => logger,
  };
  return logger;
}

describe("invocationContextFor", () => {
  it("logs each invocation under its own function, to the logger it was given", () => {
    const [first, second] = [activity("first"), activity("second")];
    const linesA: LogFields[] = [];
    const linesB: LogFields[] = [];
    const [loggerA, loggerB] = [recordingLogger(linesA), recordingLogger(linesB)];

    invocationContextFor(first, { logger: loggerA }).log("one", 1);
    invocationContextFor(second, { logger: loggerA }).warn("two");
    invocationContextFor(first, { logger: loggerB }).error("three");
    invocationContextFor(first, { logger: loggerA }).log("four");

    expect(linesA).toEqual([
      { functionName: "first", level: "information", message: "one 1" },
      { functionName: "second", level: "warning", message: "two" },
      { functionName: "first", level: "information", message: "four" },
    ]);
    expect(linesB).toEqual([{ functionName: "first", level: "error", message: "three" }]);
  });

  it("gives every invocation an id of its own", () => {
    const fn = activity("first");
    const logger = recordingLogger([]);
    const ids = new Set(Array.from({ length: 3 }, () => invocationContextFor(fn, { logger }).invocationId));
    expect(ids.size).toBe(3);
  });
});
