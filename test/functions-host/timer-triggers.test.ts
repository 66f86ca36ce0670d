import azureFunctions from "@azure/functions";
import * as df from "durable-functions";
import { describe, expect, it } from "vitest";
import { startTimerTriggers, type TimerInfo } from "../../laptop/functions-host/timer-triggers.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { captureRegistrations } from "../../laptop/worker/registration-capture.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

interface Call {
  readonly at: string;
  readonly timer: TimerInfo;
  readonly client: unknown;
}

/** One timer function on `%EVERY%`, whose invocation takes `busyMs` of the clock. */
async function timerApp(clock: VirtualClock, busyMs: number) {
  const calls: Call[] = [];
  const client = df.input.durableClient();
  const registry = await captureRegistrations(() => {
    azureFunctions.app.timer("tick", {
      schedule: "%EVERY%",
      extraInputs: [client],
      handler: async (timer, context) => {
        calls.push({
          at: clock.now().toISOString(),
          timer: timer as TimerInfo,
          client: context.extraInputs.get(client),
        });
        await clock.sleep(busyMs);
      },
    });
  });
  const logger = new MemoryLogger();
  const triggers = startTimerTriggers({
    functions: registry.withTrigger("timerTrigger"),
    resolve: (text) => text.replace("%EVERY%", "*/10 * * * * *"),
    clock,
    bindingData: (binding) => (binding.type === "durableClient" ? { hub: "test" } : undefined),
    logger,
  });
  return { calls, triggers, logger };
}

describe("the host's timer triggers", () => {
  it("fire on the resolved NCRONTAB schedule, with the durable client binding's data", async () => {
    const clock = new VirtualClock(new Date("2026-03-01T10:00:03Z"));
    const { calls, triggers } = await timerApp(clock, 0);
    await clock.advance(27_000);
    expect(calls.map((c) => c.at)).toEqual([
      "2026-03-01T10:00:10.000Z",
      "2026-03-01T10:00:20.000Z",
      "2026-03-01T10:00:30.000Z",
    ]);
    expect(calls.every((c) => !c.timer.isPastDue)).toBe(true);
    expect(calls[1]?.timer.scheduleStatus).toMatchObject({ next: "2026-03-01T10:00:30.000Z" });
    expect(calls[0]?.client).toEqual({ hub: "test" });
    await triggers.close();
    await clock.advance(60_000);
    expect(calls).toHaveLength(3);
  });

  it("never overlap: occurrences that pass during a long run fire once, at its end, past due", async () => {
    const clock = new VirtualClock(new Date("2026-03-01T10:00:03Z"));
    const { calls, triggers } = await timerApp(clock, 25_000);
    await clock.advance(60_000);
    expect(calls.map((c) => [c.at, c.timer.isPastDue])).toEqual([
      ["2026-03-01T10:00:10.000Z", false],
      // 10:00:20 and 10:00:30 passed while the first ran: one invocation when it ended.
      ["2026-03-01T10:00:35.000Z", true],
      // The second ran to 10:01:00; 10:00:40 and 10:00:50 passed.
      ["2026-03-01T10:01:00.000Z", true],
    ]);
    // Closing waits for the invocation still running, and starts no other.
    const closed = triggers.close();
    await clock.advance(60_000);
    await closed;
    expect(calls).toHaveLength(3);
  });
});
