/**
 * The outbox: every placed order's message is kept in the order book until the orders queue acknowledges
 * it, and resent with the same message id until then. A send can fail after the broker kept the message;
 * the resend is then a copy the queue's duplicate detection drops, so the order runs once. Resends stop
 * at the horizon, the orders queue's duplicate-detection window counted from when the order was placed:
 * within it a copy is always dropped by the queue. A status message about the order also ends its stay
 * (OrderBook.record): the Scheduler has it. On start every message still waiting is sent at once, so an
 * order placed just before a crash goes out when the storefront comes back.
 */
import type { Clock } from "../src/ports/clock.js";
import type { Logger } from "../src/ports/logger.js";
import type { MessageQueue } from "../src/ports/message-queue.js";
import type { OrderBook, OutboxEntry } from "./order-book.js";

/** The first resend after a failed send; each further one waits twice as long, up to MAX_RESEND_MS. */
export const FIRST_RESEND_MS = 2_000;
export const MAX_RESEND_MS = 60_000;
/** How long the relay sleeps when nothing waits, before it looks again anyway. */
const IDLE_MS = 60_000;
const BATCH = 50;

export interface OutboxOptions {
  readonly book: OrderBook;
  readonly orders: MessageQueue;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class Outbox {
  private readonly inFlight = new Set<string>();
  private readonly stopping = new AbortController();
  private wake = new AbortController();
  private loop: Promise<void> | undefined;
  /** How long after an order was placed its message may be resent: the queue's duplicate window. */
  readonly horizonMs: number;

  constructor(private readonly options: OutboxOptions) {
    this.horizonMs = options.orders.options.duplicateDetectionWindowMs;
  }

  /** Starts resending in the background, at once for everything already waiting. */
  start(): void {
    this.options.book.sendAllNow(this.options.clock.now().getTime());
    this.loop ??= this.run();
  }

  /** Stops resending; resolves once a send in progress has ended. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  /** One attempt to send the order's waiting message now; true when the queue has it. */
  async sendNow(orderId: string): Promise<boolean> {
    const entry = this.options.book.pendingSend(orderId, this.options.clock.now().getTime());
    return entry ? this.attempt(entry) : false;
  }

  private async run(): Promise<void> {
    const { book, clock, logger } = this.options;
    while (!this.stopping.signal.aborted) {
      let next: number | null;
      try {
        const due = book.dueSends(clock.now().getTime(), BATCH);
        // An entry a checkout is sending itself (sendNow) is left to it; a failure there wakes this loop.
        const mine = due.filter((entry) => !this.inFlight.has(entry.orderId));
        for (const entry of mine) {
          if (this.stopping.signal.aborted) return;
          await this.attempt(entry);
        }
        if (due.length === BATCH && mine.length > 0) continue;
        next = book.nextSendAfter(clock.now().getTime());
      } catch (error) {
        logger.error("storefront.outbox.failed", { error: messageOf(error) });
        next = clock.now().getTime() + MAX_RESEND_MS;
      }
      this.wake = new AbortController();
      const waitMs = Math.min(IDLE_MS, next === null ? IDLE_MS : Math.max(0, next - clock.now().getTime()));
      const signal = AbortSignal.any([this.stopping.signal, this.wake.signal]);
      await clock.sleep(waitMs, signal).catch(() => undefined);
    }
  }

  private async attempt(entry: OutboxEntry): Promise<boolean> {
    const { orderId } = entry;
    if (this.inFlight.has(orderId)) return false;
    this.inFlight.add(orderId);
    const attempt = entry.attempts + 1;
    const fields = { orderId, messageId: entry.message.messageId, attempt };
    try {
      const result = await this.options.orders.send(entry.message);
      this.options.book.markSent(orderId);
      // A duplicate: an earlier send that reported a failure had reached the queue after all.
      this.options.logger.info("storefront.order.sent", { ...fields, duplicate: result.duplicates > 0 });
      return true;
    } catch (error) {
      this.failed(entry, attempt, messageOf(error));
      return false;
    } finally {
      this.inFlight.delete(orderId);
    }
  }

  private failed(entry: OutboxEntry, attempt: number, error: string): void {
    const { book, clock, logger } = this.options;
    const now = clock.now().getTime();
    const retryInMs = Math.min(MAX_RESEND_MS, FIRST_RESEND_MS * 2 ** (attempt - 1));
    const fields = { orderId: entry.orderId, messageId: entry.message.messageId, attempt, error };
    if (now + retryInMs > Date.parse(entry.placedAt) + this.horizonMs) {
      book.abandonSend(entry.orderId, attempt, new Date(now).toISOString(), error);
      logger.error("storefront.order.sendAbandoned", { ...fields, horizonMs: this.horizonMs });
    } else {
      book.deferSend(entry.orderId, attempt, now + retryInMs, error);
      logger.warn("storefront.order.sendFailed", { ...fields, retryInMs });
    }
    this.wake.abort();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
