import { LocalPipeline } from "../../laptop/embedded/pipeline.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { openDatabase } from "../../src/adapters/sqlite/database.js";
import { loadPipelineSettings } from "../../src/config/settings.js";
import { seededRandom } from "../../src/domain/backoff.js";
import { T0 } from "./records.js";

export interface IdlePipeline {
  readonly pipeline: LocalPipeline;
  readonly clock: VirtualClock;
  readonly logger: MemoryLogger;
  close(): Promise<void>;
}

/**
 * The embedded pipeline on an in-memory database and a virtual clock at T0, opened but not started: its
 * API backend is the one `sas start` serves (MAX_IN_FLIGHT 200), and nothing moves an order, claims it
 * or scans for it unless the test does. No partner listens at its address; nothing here calls one.
 */
export async function openIdlePipeline(): Promise<IdlePipeline> {
  const clock = new VirtualClock(T0);
  const logger = new MemoryLogger();
  const db = openDatabase(":memory:");
  const pipeline = await LocalPipeline.open({
    db,
    clock,
    random: seededRandom(1),
    logger,
    settings: loadPipelineSettings({}),
    partnerUrl: "http://127.0.0.1:9",
    starterIntervalMs: 1_000,
    supervisorIntervalMs: 5_000,
  });
  return {
    pipeline,
    clock,
    logger,
    close: async () => {
      await pipeline.stop();
      db.close();
    },
  };
}
