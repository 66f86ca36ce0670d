import type { LocalPipeline } from "../../../laptop/embedded/pipeline.js";
import { QueueConsumer } from "../../../laptop/embedded/queue-consumer.js";
import { VirtualClock } from "../../../laptop/simulation/virtual-clock.js";
import type { SqliteMessageQueue } from "../../../laptop/sqlite/sqlite-message-queue.js";
import type { EmbeddedDatabase } from "../../../src/adapters/sqlite/database.js";
import { QUEUE_NAMES } from "../../../src/config/names.js";
import { type AgentRequest, parseAgentRequest } from "../../../src/domain/agent-messages.js";
import type { OrderMessage } from "../../../src/domain/order.js";
import type { DurableClient } from "../../../src/ports/durable-client.js";
import type { Logger } from "../../../src/ports/logger.js";
import type {
  InboundMessage,
  MessageDisposition,
  MessageHandler,
} from "../../../src/ports/message-handler.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";
import { createAgentReplyHandler } from "../../../src/scheduler/agent-reply.js";
import { createSubmissionHandler } from "../../../src/scheduler/submission.js";
import { CapturedLog } from "../captured-log.js";
import { openFuzzPipeline } from "../fuzz-pipeline.js";
import { WriteLog } from "../write-log.js";

/** Builds the reply queue's handler; the real one unless a test plants another. */
export type ReplyHandlerFactory = (deps: {
  logger: Logger;
}) => (message: InboundMessage, durable: DurableClient) => Promise<MessageDisposition>;

/**
 * The embedded pipeline with the Agent in its queue form, its reply queue consumed as
 * `LocalPipeline.start` consumes it, and nothing consuming the request queue: the orchestrations
 * send their requests and wait, and the fuzzer answers them (or not) on the reply queue. The
 * starter runs only when asked; the Supervisor never runs and the virtual clock never moves, so no
 * deadline passes while a reply is judged.
 */
export class ReplyPipeline {
  readonly log: CapturedLog;
  readonly pipeline: LocalPipeline;
  readonly writes: WriteLog;
  readonly responses: SqliteMessageQueue;
  private readonly requests: SqliteMessageQueue;
  private readonly consumer: QueueConsumer;
  private readonly submission: MessageHandler;
  private submitted = 0;

  private constructor(private readonly parts: Parts) {
    const { pipeline, clock, log } = parts;
    this.log = log;
    this.pipeline = pipeline;
    this.writes = new WriteLog(parts.db);
    this.responses = pipeline.queue(QUEUE_NAMES.agentResponses);
    this.requests = pipeline.queue(QUEUE_NAMES.agentRequests);
    const handler = parts.replies({ logger: log.logger });
    this.consumer = new QueueConsumer({
      queue: this.responses,
      handler: (message) => handler(message, pipeline.durable),
      clock,
      logger: log.logger,
    });
    this.consumer.start();
    this.submission = createSubmissionHandler(pipeline.submissionDeps());
  }

  static async open(replies: ReplyHandlerFactory = createAgentReplyHandler): Promise<ReplyPipeline> {
    const log = new CapturedLog();
    const clock = new VirtualClock(new Date("2026-01-01T00:00:00.000Z"));
    // Orders the fuzzer never finishes stay in flight; the cap must not stop the starter.
    const { db, pipeline } = await openFuzzPipeline(
      { AGENT_MODE: "queue", MAX_IN_FLIGHT: "100000" },
      clock,
      log.logger,
    );
    return new ReplyPipeline({ log, clock, db, pipeline, replies });
  }

  /** Submits `orders` through the submission handler and starts their first attempts; returns their first requests. */
  async startOrders(orders: readonly OrderMessage[]): Promise<AgentRequest[]> {
    for (const order of orders) {
      await this.submission({
        messageId: `order-${++this.submitted}`,
        body: order as unknown as JsonValue,
        deliveryCount: 1,
        enqueuedTime: this.parts.clock.now(),
        correlationId: undefined,
        applicationProperties: {},
      });
    }
    await this.pipeline.runStarter();
    await this.settle();
    return this.takeRequests();
  }

  /** Puts `body` on the reply queue under `messageId` and waits until it and whatever it set off are done. */
  async reply(messageId: string, body: JsonValue): Promise<AgentRequest[]> {
    await this.responses.send({ messageId, body });
    this.consumer.nudge();
    await this.settle();
    return this.takeRequests();
  }

  /** The requests the orchestrations have sent since the last call, taken off the request queue. */
  private async takeRequests(): Promise<AgentRequest[]> {
    const taken: AgentRequest[] = [];
    for (;;) {
      const batch = await this.requests.receive(100);
      for (const message of batch) {
        await this.requests.complete(message);
        const parsed = parseAgentRequest(message.body);
        if (parsed.ok) taken.push(parsed.value);
      }
      if (batch.length === 0) return taken;
    }
  }

  private async settle(): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await this.consumer.idle();
      await this.pipeline.runtime.idle();
    }
  }

  async close(): Promise<void> {
    await this.consumer.stop();
    await this.pipeline.stop();
    this.parts.db.close();
  }
}

interface Parts {
  readonly log: CapturedLog;
  readonly clock: VirtualClock;
  readonly db: EmbeddedDatabase;
  readonly pipeline: LocalPipeline;
  readonly replies: ReplyHandlerFactory;
}
