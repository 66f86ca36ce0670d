import type { Clock } from "../../src/ports/clock.js";
import type { LogFields, Logger } from "../../src/ports/logger.js";
import type { InboundMessage, MessageDisposition, MessageHandler } from "../../src/ports/message-handler.js";
import {
  MessageLockLostError,
  type MessageQueue,
  type ReceivedMessage,
} from "../../src/ports/message-queue.js";
import { ClockAlarm } from "./clock-alarm.js";
import { LockRenewals } from "./lock-renewals.js";

export interface QueueConsumerOptions {
  readonly queue: MessageQueue;
  readonly handler: MessageHandler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Messages handled at once (default 16, like the Service Bus trigger's maxConcurrentCalls). */
  readonly maxConcurrentCalls?: number;
  /** How long to wait before looking again when the queue is empty (default 1000). */
  readonly pollIntervalMs?: number;
  /** Names the consumer in its logs (default: the queue's name). */
  readonly name?: string;
}

type ConsumerState = "new" | "running" | "stopping" | "stopped";

/** What the handler did: returned a disposition, or threw. */
type Outcome =
  | { readonly ok: true; readonly disposition: MessageDisposition }
  | { readonly ok: false; readonly error: unknown };

/**
 * The embedded host's stand-in for the Functions Service Bus trigger in peek-lock mode: receives up to
 * `maxConcurrentCalls` messages at once, renews each lock while its handler runs, and settles each
 * message as the handler says (complete, dead-letter) or abandons it when the handler throws, so the
 * queue redelivers it and dead-letters it past its maximum delivery count.
 */
export class QueueConsumer {
  private readonly queue: MessageQueue;
  private readonly handler: MessageHandler;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly maxConcurrentCalls: number;
  private readonly pollIntervalMs: number;
  private readonly inFlight = new Set<Promise<void>>();
  private state: ConsumerState = "new";
  private loop: Promise<void> | undefined;
  /** Set by nudges and settlements; makes the loop look at the queue again instead of pausing. */
  private wakeRequested = false;
  /** Resumes the paused loop, if it is paused. */
  private resume: (() => void) | undefined;
  /** Ends a pause on the clock when nothing wakes the loop first. */
  private readonly poll: ClockAlarm;
  private readonly renewals: LockRenewals<{ readonly message: ReceivedMessage; readonly fields: LogFields }>;
  /** The last receive found nothing and no handler is running. */
  private drained = false;
  private idleWaiters: (() => void)[] = [];

  /** The queue this consumer drains. */
  get queueName(): string {
    return this.queue.name;
  }

  constructor(options: QueueConsumerOptions) {
    this.queue = options.queue;
    this.handler = options.handler;
    this.clock = options.clock;
    this.maxConcurrentCalls = options.maxConcurrentCalls ?? 16;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.logger = options.logger.child({ consumer: options.name ?? options.queue.name });
    if (!Number.isSafeInteger(this.maxConcurrentCalls) || this.maxConcurrentCalls < 1) {
      throw new RangeError(`maxConcurrentCalls must be a positive integer; got ${this.maxConcurrentCalls}`);
    }
    if (!Number.isFinite(this.pollIntervalMs) || this.pollIntervalMs <= 0) {
      throw new RangeError(`pollIntervalMs must be a positive number; got ${this.pollIntervalMs}`);
    }
    this.poll = new ClockAlarm(this.clock, () => this.resumeLoop());
    // Every half lock duration, as the trigger's auto lock renewal does.
    const renewEveryMs = Math.max(1, Math.floor(this.queue.options.lockDurationMs / 2));
    this.renewals = new LockRenewals(this.clock, renewEveryMs, ({ message, fields }) =>
      this.renewLock(message, fields),
    );
  }

  start(): void {
    if (this.state === "running") return;
    if (this.state !== "new") throw new Error(`consumer of ${this.queue.name} was stopped; create a new one`);
    this.state = "running";
    this.loop = this.run();
  }

  /** Looks at the queue now instead of at the next poll: call it after sending. */
  nudge(): void {
    this.drained = false;
    this.wake();
  }

  /** Resolves once nothing is being handled and the last receive found no available message. */
  idle(): Promise<void> {
    if (this.state === "stopped" || (this.drained && this.inFlight.size === 0)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops receiving, then waits for the handlers in flight to finish and their messages to be settled. */
  async stop(): Promise<void> {
    if (this.state === "new" || this.state === "stopped") {
      this.state = "stopped";
      this.resolveIdleWaiters();
      return;
    }
    this.state = "stopping";
    this.wake();
    await this.loop;
    this.poll.close();
    // The loop has ended, so no handler starts any more; handler tasks never reject.
    await Promise.all(this.inFlight);
    this.renewals.close();
    this.state = "stopped";
    this.resolveIdleWaiters();
  }

  private async run(): Promise<void> {
    while (this.state === "running") {
      this.wakeRequested = false;
      const free = this.maxConcurrentCalls - this.inFlight.size;
      if (free === 0) {
        await this.waitForWake(undefined);
        continue;
      }
      let received: ReceivedMessage[];
      try {
        received = await this.queue.receive(free);
      } catch (error) {
        this.logger.error("queue.receive.failed", { queue: this.queue.name, error: messageOf(error) });
        await this.waitForWake(this.pollIntervalMs);
        continue;
      }
      for (const message of received) this.dispatch(message);
      if (received.length > 0) {
        this.drained = false;
        continue;
      }
      if (this.inFlight.size === 0) {
        this.drained = true;
        this.resolveIdleWaiters();
      }
      await this.waitForWake(this.pollIntervalMs);
    }
  }

  /** Waits for a wake, or on the clock for `pollMs` when given. Never busy: a wake is the only shortcut. */
  private async waitForWake(pollMs: number | undefined): Promise<void> {
    if (this.wakeRequested) return;
    await new Promise<void>((resolve) => {
      this.resume = resolve;
      if (pollMs !== undefined) this.poll.ringBy(this.clock.now().getTime() + pollMs);
    });
  }

  private wake(): void {
    this.wakeRequested = true;
    this.poll.clear();
    this.resumeLoop();
  }

  private resumeLoop(): void {
    const resume = this.resume;
    this.resume = undefined;
    resume?.();
  }

  private dispatch(message: ReceivedMessage): void {
    const task = this.handle(message)
      .catch((error: unknown) => {
        this.logger.error("queue.consumer.failed", {
          ...fieldsOf(this.queue, message),
          error: messageOf(error),
        });
      })
      .finally(() => {
        this.inFlight.delete(task);
        this.wake();
      });
    this.inFlight.add(task);
  }

  private async handle(message: ReceivedMessage): Promise<void> {
    const fields = fieldsOf(this.queue, message);
    const renewal = this.renewals.begin({ message, fields });
    let outcome: Outcome;
    try {
      outcome = { ok: true, disposition: await this.handler(toInbound(message)) };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      await this.renewals.end(renewal);
    }
    await this.settle(message, outcome, fields);
  }

  private async settle(message: ReceivedMessage, outcome: Outcome, fields: LogFields): Promise<void> {
    const disposition = outcome.ok ? outcome.disposition : undefined;
    const operation = disposition?.action ?? "abandon";
    try {
      if (disposition?.action === "complete") {
        await this.queue.complete(message);
        this.logger.info("queue.message.completed", fields);
      } else if (disposition?.action === "deadLetter") {
        const { reason, description } = disposition;
        await this.queue.deadLetter(message, { reason, description });
        this.logger.warn("queue.message.deadLettered", { ...fields, reason, description });
      } else {
        const error = outcome.ok
          ? `handler returned an unknown disposition: ${JSON.stringify(outcome.disposition)}`
          : messageOf(outcome.error);
        await this.queue.abandon(message);
        this.logger.warn("queue.message.abandoned", { ...fields, error });
      }
    } catch (error) {
      if (!this.loggedLockLost(error, operation, fields)) {
        // The lock runs out and the queue redelivers the message.
        this.logger.error("queue.settle.failed", { ...fields, operation, error: messageOf(error) });
      }
    }
  }

  /** Logs a lost lock, which is expected now and then: the message is redelivered unless already settled. */
  private loggedLockLost(error: unknown, operation: string, fields: LogFields): boolean {
    if (!(error instanceof MessageLockLostError)) return false;
    this.logger.warn("queue.lock.lost", { ...fields, operation, error: error.message });
    return true;
  }

  /** Renews the lock of a message being handled; resolves whether to go on renewing it. */
  private async renewLock(message: ReceivedMessage, fields: LogFields): Promise<boolean> {
    try {
      const lockedUntil = await this.queue.renewLock(message);
      this.logger.debug("queue.lock.renewed", { ...fields, lockedUntil: lockedUntil.toISOString() });
    } catch (error) {
      if (this.loggedLockLost(error, "renewLock", fields)) return false;
      this.logger.warn("queue.lock.renewFailed", { ...fields, error: messageOf(error) });
    }
    return true;
  }

  private resolveIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function toInbound(message: ReceivedMessage): InboundMessage {
  return {
    messageId: message.messageId,
    body: message.body,
    deliveryCount: message.deliveryCount,
    enqueuedTime: message.enqueuedTime,
    correlationId: message.correlationId,
    applicationProperties: message.applicationProperties,
  };
}

function fieldsOf(queue: MessageQueue, message: ReceivedMessage): LogFields {
  return { queue: queue.name, messageId: message.messageId, deliveryCount: message.deliveryCount };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
