/**
 * The storefront (storefront/) beside the embedded pipeline, as `sas start` runs it: checkout sends to
 * the pipeline's orders queue and the Scheduler answers on the storefront's own status queue, both
 * SQLite queues in the pipeline's database, exactly as they are Service Bus queues in Azure.
 */
import { join } from "node:path";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { QUEUE_NAMES } from "../../src/config/names.js";
import type { Logger } from "../../src/ports/logger.js";
import type { MessageQueue } from "../../src/ports/message-queue.js";
import { type Storefront, startStorefront } from "../../storefront/storefront.js";
import type { LocalPipeline } from "./pipeline.js";

export type { Storefront } from "../../storefront/storefront.js";

/** The storefront's private status queue, named as `replyTo` in its orders. */
export const STOREFRONT_STATUS_QUEUE = "storefront-status";

export interface EmbeddedStorefrontOptions {
  readonly pipeline: LocalPipeline;
  readonly port: number;
  readonly host: string;
  /** The host's data folder (the order book is `storefront.sqlite` in it), or ":memory:". */
  readonly data: string;
  readonly logger: Logger;
}

export function startEmbeddedStorefront(options: EmbeddedStorefrontOptions): Promise<Storefront> {
  const { pipeline } = options;
  return startStorefront({
    orders: nudgingOnSend(pipeline.queue(QUEUE_NAMES.orders), () => pipeline.nudge(QUEUE_NAMES.orders)),
    statusQueue: pipeline.queue(STOREFRONT_STATUS_QUEUE),
    statusQueueName: STOREFRONT_STATUS_QUEUE,
    orderBookFile: options.data === ":memory:" ? ":memory:" : join(options.data, "storefront.sqlite"),
    port: options.port,
    host: options.host,
    clock: new SystemClock(),
    logger: options.logger,
  });
}

/**
 * The queue, with each send followed by `nudge`: the embedded consumers poll, and a nudge has them look
 * at once, as Service Bus delivers to its trigger without waiting.
 */
function nudgingOnSend(queue: MessageQueue, nudge: () => void): MessageQueue {
  return {
    name: queue.name,
    options: queue.options,
    deadLetterQueue: queue.deadLetterQueue,
    send: async (messages) => {
      const result = await queue.send(messages);
      nudge();
      return result;
    },
    receive: (max) => queue.receive(max),
    complete: (message) => queue.complete(message),
    abandon: (message) => queue.abandon(message),
    deadLetter: (message, details) => queue.deadLetter(message, details),
    renewLock: (message) => queue.renewLock(message),
    peek: (max, from) => queue.peek(max, from),
  };
}
