import { seededRandom } from "../../src/domain/backoff.js";
import type { JsonValue, MessageQueue, OutgoingMessage } from "../../src/ports/message-queue.js";
import { orderMessageId } from "../../src/scheduler/order-message-id.js";
import { demoOrder } from "../embedded/demo.js";

export interface SendOrdersOptions {
  readonly queue: MessageQueue;
  readonly count: number;
  /** Prefix of the generated order ids; a new prefix per run keeps runs apart. */
  readonly prefix: string;
  readonly seed: number;
  /** The status queue each order names as `replyTo`. */
  readonly replyTo: string;
  /** Messages per send call (default 100). */
  readonly batchSize?: number;
}

/**
 * `sas send`: posts generated order messages to a queue, as a submitting application does, with the
 * same message ids as the HTTP API gives them.
 */
export async function sendOrders(options: SendOrdersOptions): Promise<{ sent: number; orderIds: string[] }> {
  const random = seededRandom(options.seed);
  const batchSize = options.batchSize ?? 100;
  const orderIds: string[] = [];
  let batch: OutgoingMessage[] = [];
  const flush = async () => {
    if (batch.length > 0) await options.queue.send(batch);
    batch = [];
  };
  for (let index = 0; index < options.count; index++) {
    const body = {
      ...demoOrder(options.prefix, index, random),
      replyTo: options.replyTo,
    } as unknown as JsonValue;
    orderIds.push((body as { orderId: string }).orderId);
    batch.push({ messageId: orderMessageId(body), body });
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return { sent: orderIds.length, orderIds };
}
