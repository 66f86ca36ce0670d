import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalDurableRuntime } from "../../laptop/durable/local-durable-runtime.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { captureRegistrations } from "../../laptop/worker/registration-capture.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { registerTestApp, type TestAppDeps } from "../support/durable-test-app.js";

export const START = "2026-03-01T10:00:00.000Z";

export interface Harness {
  readonly runtime: LocalDurableRuntime;
  readonly clock: VirtualClock;
  readonly deps: TestAppDeps;
  readonly logger: MemoryLogger;
  readonly db: EmbeddedDatabase;
}

export interface HarnessOptions {
  readonly path?: string;
  readonly clock?: VirtualClock;
  readonly deps?: TestAppDeps;
  readonly variant?: "v1" | "v2";
  readonly maxConcurrentActivities?: number;
  readonly replaySessions?: boolean;
}

/** A runtime over the test app, on a virtual clock. Each call opens its own connection to `path`. */
export async function openHarness(options: HarnessOptions = {}): Promise<Harness> {
  const deps = options.deps ?? { calls: [] };
  const registry = await captureRegistrations(() => registerTestApp(deps, options.variant));
  const db = openDatabase(options.path ?? ":memory:");
  const clock = options.clock ?? new VirtualClock(START);
  const logger = new MemoryLogger();
  const runtime = LocalDurableRuntime.open({
    db,
    clock,
    registry,
    logger,
    ...(options.maxConcurrentActivities ? { maxConcurrentActivities: options.maxConcurrentActivities } : {}),
    ...(options.replaySessions ? { replaySessions: true } : {}),
  });
  return { runtime, clock, deps, logger, db };
}

export function temporaryDatabasePath(): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "sas-durable-"));
  return { path: join(dir, "durable.sqlite"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
