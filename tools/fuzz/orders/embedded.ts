import type { LocalPipeline } from "../../../laptop/embedded/pipeline.js";
import { QueueConsumer } from "../../../laptop/embedded/queue-consumer.js";
import { VirtualClock } from "../../../laptop/simulation/virtual-clock.js";
import type { MessageHandler } from "../../../src/ports/message-handler.js";
import { createSubmissionHandler, type SubmissionDeps } from "../../../src/scheduler/submission.js";
import { CapturedLog } from "../captured-log.js";
import { openFuzzPipeline } from "../fuzz-pipeline.js";
import { WriteLog } from "../write-log.js";
import type { OrderStores } from "./stored.js";

/** Builds the orders queue's handler; the real submission handler unless a test plants another. */
export type SubmissionFactory = (deps: SubmissionDeps) => MessageHandler;

/** The embedded pipeline's order path: its stores, its orders queue, and a consumer of that queue. */
export interface EmbeddedOrders {
  readonly pipeline: LocalPipeline;
  readonly stores: OrderStores;
  readonly consumer: QueueConsumer;
  readonly log: CapturedLog;
  close(): Promise<void>;
}

const T0 = new Date("2026-01-01T00:00:00.000Z");

/**
 * The embedded pipeline on an in-memory database and a virtual clock, its orders queue consumed as
 * `LocalPipeline.start` consumes it: the same consumer and the same submission handler. The starter,
 * the Supervisor and the orchestrations are not started, so nothing but submission writes a record
 * and the fuzzer can compare records before and after each message. No partner is called.
 */
export async function openEmbeddedOrders(
  submission: SubmissionFactory = createSubmissionHandler,
): Promise<EmbeddedOrders> {
  const clock = new VirtualClock(T0);
  const log = new CapturedLog();
  const { db, pipeline } = await openFuzzPipeline({ MAX_PENDING: "10000000" }, clock, log.logger);
  const handler = submission(pipeline.submissionDeps());
  const consumer = new QueueConsumer({ queue: pipeline.ordersQueue, handler, clock, logger: log.logger });
  consumer.start();
  const stores = { states: pipeline.states, orders: pipeline.orders, writes: new WriteLog(db) };
  return {
    pipeline,
    stores,
    consumer,
    log,
    close: async () => {
      await consumer.stop();
      await pipeline.stop();
      db.close();
    },
  };
}
