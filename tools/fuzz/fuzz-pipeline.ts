import { LocalPipeline } from "../../laptop/embedded/pipeline.js";
import type { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { type Environment, loadPipelineSettings, type PipelineSettings } from "../../src/config/settings.js";
import { seededRandom } from "../../src/domain/backoff.js";
import type { DurableClient } from "../../src/ports/durable-client.js";
import type { Logger } from "../../src/ports/logger.js";

/**
 * The embedded pipeline as the fuzz targets open it: an in-memory database, `clock`, a partner that
 * nobody answers (no target lets an order reach it), and the timings the targets drive by hand.
 */
export async function openFuzzPipeline(
  environment: Environment,
  clock: VirtualClock,
  logger: Logger,
): Promise<{ db: EmbeddedDatabase; settings: PipelineSettings; pipeline: LocalPipeline }> {
  const db = openDatabase(":memory:");
  const settings = loadPipelineSettings(environment);
  const pipeline = await LocalPipeline.open({
    db,
    clock,
    random: seededRandom(1),
    logger,
    settings,
    partnerUrl: "http://127.0.0.1:9",
    starterIntervalMs: 1_000,
    supervisorIntervalMs: 5_000,
  });
  return { db, settings, pipeline };
}

/** A durable client for targets that start no orchestration: every call fails, saying why. */
export function refusingDurableClient(why: string): DurableClient {
  const refuse = () => Promise.reject(new Error(why));
  return {
    startNew: refuse,
    raiseEvent: refuse,
    getStatus: refuse,
    terminate: refuse,
    purge: refuse,
    listFinished: refuse,
  };
}
