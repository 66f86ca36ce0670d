// Runs a durable runtime on the database file given as the first argument, starts an orchestration
// whose first activity never finishes here, says "activity-started" once it runs, and waits to be killed.

import { LocalDurableRuntime } from "../../laptop/durable/local-durable-runtime.js";
import { captureRegistrations } from "../../laptop/worker/registration-capture.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { JsonLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { registerTestApp, TEST_ORCHESTRATIONS } from "../support/durable-test-app.js";

const [path, instanceId] = process.argv.slice(2);
if (!path || !instanceId) throw new Error("usage: crash-child <database> <instanceId>");

const deps = { calls: [] as string[], gate: new Promise<void>(() => undefined) };
const registry = await captureRegistrations(() => registerTestApp(deps));
const runtime = LocalDurableRuntime.open({
  db: openDatabase(path),
  clock: new SystemClock(),
  registry,
  logger: JsonLogger.toStream(process.stderr, "warn"),
});
await runtime.startNew(TEST_ORCHESTRATIONS.blockingSequence, { instanceId, input: 21 });
const started = setInterval(() => {
  if (deps.calls.includes("blockingDouble(21)")) {
    clearInterval(started);
    process.stdout.write("activity-started\n");
  }
}, 5);
