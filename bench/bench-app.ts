import type { OrchestrationContext } from "durable-functions";
import * as df from "durable-functions";

export const BENCH = { sequence: "benchSequence", race: "benchRace" } as const;

/** The two benchmark orchestrations, registered as an Azure app registers its functions. */
export function registerBenchApp(): void {
  df.app.activity("benchIncrement", { handler: (n: number) => n + 1 });
  df.app.activity("benchSend", { handler: (step: string) => `sent ${step}` });

  df.app.orchestration(BENCH.sequence, function* (context: OrchestrationContext) {
    let value = 0;
    for (let i = 0; i < 5; i++) value = yield context.df.callActivity("benchIncrement", value);
    return value;
  });

  df.app.orchestration(BENCH.race, function* (context: OrchestrationContext) {
    yield context.df.callActivity("benchSend", "step");
    const timer = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60_000));
    const reply = context.df.waitForExternalEvent("reply");
    const winner = yield context.df.Task.any([reply, timer]);
    if (winner === reply) timer.cancel();
    return winner === reply ? "reply" : "timeout";
  });
}
