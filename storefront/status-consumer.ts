/**
 * The storefront's side of the pattern's private response queue: receives the Scheduler's status
 * messages (peek-lock), records each in the order book, tells the order's watchers, then completes
 * it. A message that is not a valid status message, or that names an order this storefront never
 * placed, is dead-lettered with its reason; a failure to record one abandons it, so the queue delivers it
 * again (and dead-letters it past its maximum delivery count).
 */
import { parseStatusMessage } from "../src/domain/status-message.js";
import { toInstant } from "../src/domain/time.js";
import type { Clock } from "../src/ports/clock.js";
import type { Logger } from "../src/ports/logger.js";
import type { MessageQueue, ReceivedMessage } from "../src/ports/message-queue.js";
import type { LiveOrders } from "./live-orders.js";
import type { OrderBook } from "./order-book.js";

export const DEAD_LETTER_REASONS = {
  invalid: "InvalidStatusMessage",
  unknownOrder: "UnknownOrder",
} as const;

export interface StatusConsumerOptions {
  readonly queue: MessageQueue;
  readonly book: OrderBook;
  readonly live: LiveOrders;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long to wait before looking again when the queue was empty (default 250). */
  readonly pollIntervalMs?: number;
  /** Messages taken at once (default 16). */
  readonly batchSize?: number;
}

export interface StatusConsumer {
  /** Stops receiving; resolves once the messages in hand are settled. */
  stop(): Promise<void>;
}

/** What the consumer does with one message; false when it failed and the message was abandoned. */
export type StatusHandler = (message: ReceivedMessage) => Promise<boolean>;

export function createStatusHandler(options: StatusConsumerOptions): StatusHandler {
  const logger = options.logger.child({ queue: options.queue.name });
  return (message) => handleStatus(options, logger, message);
}

export function startStatusConsumer(options: StatusConsumerOptions): StatusConsumer {
  const { queue, clock } = options;
  const logger = options.logger.child({ queue: queue.name });
  const pollMs = options.pollIntervalMs ?? 250;
  const stopping = new AbortController();
  const handle = createStatusHandler(options);

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      let received: ReceivedMessage[] = [];
      let failed = false;
      try {
        received = await queue.receive(options.batchSize ?? 16);
      } catch (error) {
        logger.error("storefront.status.receiveFailed", { error: messageOf(error) });
        failed = true;
      }
      for (const message of received) if (!(await handle(message))) failed = true;
      // After a failure, a pause: a fault that lasts (a full disk) is not met with a burst of redeliveries.
      if (received.length > 0 && !failed) continue;
      await clock.sleep(pollMs, stopping.signal).catch(() => undefined);
    }
  })();

  return {
    stop: async () => {
      stopping.abort();
      await loop;
    },
  };
}

async function handleStatus(
  { queue, book, live, clock }: StatusConsumerOptions,
  logger: Logger,
  message: ReceivedMessage,
): Promise<boolean> {
  const fields = { messageId: message.messageId, deliveryCount: message.deliveryCount };
  try {
    const parsed = parseStatusMessage(message.body);
    if (!parsed.ok) {
      await deadLetter(queue, logger, message, DEAD_LETTER_REASONS.invalid, parsed.error.message);
      return true;
    }
    const status = parsed.value;
    const orderFields = {
      ...fields,
      orderId: status.orderId,
      status: status.status,
      attempt: status.attempt,
    };
    const outcome = book.record(status, toInstant(clock.now()));
    if (outcome === "unknownOrder") {
      const description = `order ${status.orderId} was not placed by this storefront`;
      await deadLetter(queue, logger, message, DEAD_LETTER_REASONS.unknownOrder, description);
      return true;
    }
    const order = outcome === "recorded" ? book.get(status.orderId) : undefined;
    if (order) {
      logger.info("storefront.status.recorded", { ...orderFields, state: order.state, detail: order.detail });
      // Recorded, so told now: a redelivery after a failed completion is a duplicate, told to nobody.
      live.publish(order);
    } else {
      logger.info("storefront.status.duplicate", orderFields);
    }
    await queue.complete(message);
    return true;
  } catch (error) {
    logger.warn("storefront.status.failed", { ...fields, error: messageOf(error) });
    await queue.abandon(message).catch((abandonError: unknown) => {
      // The lock runs out and the queue delivers the message again.
      logger.error("storefront.status.abandonFailed", { ...fields, error: messageOf(abandonError) });
    });
    return false;
  }
}

async function deadLetter(
  queue: MessageQueue,
  logger: Logger,
  message: ReceivedMessage,
  reason: string,
  description: string,
): Promise<void> {
  await queue.deadLetter(message, { reason, description });
  logger.warn("storefront.status.deadLettered", { messageId: message.messageId, reason, description });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
