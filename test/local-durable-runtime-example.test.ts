import * as df from "durable-functions";
import { expect, it } from "vitest";
import { LocalDurableRuntime } from "../laptop/durable/local-durable-runtime.js";
import { VirtualClock } from "../laptop/simulation/virtual-clock.js";
import { captureRegistrations } from "../laptop/worker/registration-capture.js";
import { MemoryLogger } from "../src/adapters/logging/json-logger.js";
import { openDatabase } from "../src/adapters/sqlite/database.js";

let calls = 0;

function registerMyApp(): void {
  df.app.activity("charge", {
    handler: (amount: number) => {
      calls++;
      if (calls === 1) throw new Error("payment service unavailable");
      return { charged: amount, calls };
    },
  });
  df.app.orchestration("checkout", function* (context) {
    const retry = new df.RetryOptions(5_000, 3);
    return yield context.df.callActivityWithRetry("charge", retry, context.df.getInput());
  });
}

it("retries the charge five seconds later, on a clock the test moves", async () => {
  const registry = await captureRegistrations(registerMyApp);
  const clock = new VirtualClock("2026-01-01T00:00:00.000Z");
  const runtime = LocalDurableRuntime.open({
    db: openDatabase(":memory:"), // or a file, to test a restart: open a second runtime on it
    clock,
    registry,
    logger: new MemoryLogger(),
  });
  await runtime.startNew("checkout", { instanceId: "order-1", input: 42 });
  await runtime.idle();
  expect(calls).toBe(1); // the first attempt failed; the retry waits on the clock
  clock.advance(5_000);
  const status = await runtime.waitForCompletion("order-1");
  expect(status.output).toEqual({ charged: 42, calls: 2 });
  await runtime.close();
});
