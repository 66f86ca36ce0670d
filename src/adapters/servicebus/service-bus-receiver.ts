import {
  isServiceBusError,
  type ServiceBusReceivedMessage,
  type ServiceBusReceiver,
} from "@azure/service-bus";
import Long from "long";
import type { Clock } from "../../ports/clock.js";
import {
  type DeadLetterDetails,
  MessageLockLostError,
  type QueueReceiver,
  type ReceivedMessage,
} from "../../ports/message-queue.js";
import { toReceivedMessage } from "./message-mapping.js";
import { serialSettlement } from "./serial-settlement.js";

/** What the SDK throws when settling a message it has already seen settled. */
const ALREADY_SETTLED = "The message has either been deleted or already settled";

export interface ReceiverSettings {
  /** How long a receive waits for the first message. */
  readonly receiveWaitMs: number;
  readonly lockDurationMs: number;
  readonly clock: Clock;
  /** False for a dead-letter queue, which cannot dead-letter. */
  readonly canDeadLetter: boolean;
}

/**
 * Peek-lock receiving through one SDK receiver. The SDK settles a message through the object it
 * received, so each locked message is kept by its lock token until it is settled or its lock has
 * long expired; a token this receiver does not hold is a lost lock.
 */
export class ServiceBusQueueReceiver implements QueueReceiver {
  private readonly locked = new Map<string, ServiceBusReceivedMessage>();
  /** The SDK refuses a receive while another is in progress on the same receiver, so they queue. */
  private receiving: Promise<unknown> = Promise.resolve();
  private readonly settle = serialSettlement();

  constructor(
    private readonly receiver: ServiceBusReceiver,
    readonly name: string,
    private readonly settings: ReceiverSettings,
  ) {}

  async receive(maxMessages: number): Promise<ReceivedMessage[]> {
    checkPositiveInteger("maxMessages", maxMessages);
    const receiving = this.receiving.then(() =>
      this.receiver.receiveMessages(maxMessages, { maxWaitTimeInMs: this.settings.receiveWaitMs }),
    );
    this.receiving = receiving.catch(() => undefined);
    const messages = await receiving;
    this.forgetLongExpiredLocks();
    return messages.map((message) => {
      if (message.lockToken !== undefined) this.locked.set(message.lockToken, message);
      return toReceivedMessage(message, true);
    });
  }

  async complete(message: ReceivedMessage): Promise<void> {
    await this.withLock(message, true, (m) => this.receiver.completeMessage(m));
  }

  async abandon(message: ReceivedMessage): Promise<void> {
    await this.withLock(message, true, (m) => this.receiver.abandonMessage(m));
  }

  async deadLetter(message: ReceivedMessage, details: DeadLetterDetails): Promise<void> {
    if (!this.settings.canDeadLetter)
      throw new Error(`${this.name} is a dead-letter queue; it cannot dead-letter`);
    await this.withLock(message, true, (m) =>
      this.receiver.deadLetterMessage(m, {
        deadLetterReason: details.reason,
        deadLetterErrorDescription: details.description,
      }),
    );
  }

  async renewLock(message: ReceivedMessage): Promise<Date> {
    return this.withLock(message, false, (m) => this.receiver.renewMessageLock(m));
  }

  async peek(maxMessages: number, fromSequenceNumber = 1): Promise<ReceivedMessage[]> {
    checkPositiveInteger("maxMessages", maxMessages);
    if (!Number.isSafeInteger(fromSequenceNumber) || fromSequenceNumber < 0) {
      throw new RangeError(`fromSequenceNumber must be a non-negative integer; got ${fromSequenceNumber}`);
    }
    // Without a starting point the SDK peeks on from where its previous peek ended.
    const peeked = await this.receiver.peekMessages(maxMessages, {
      fromSequenceNumber: Long.fromNumber(fromSequenceNumber),
    });
    return peeked.map((message) => toReceivedMessage(message, false));
  }

  async close(): Promise<void> {
    this.locked.clear();
    await this.receiver.close();
  }

  /** Runs `action` on the SDK's message for the lock `message` holds; a lost lock becomes MessageLockLostError. */
  private async withLock<T>(
    message: ReceivedMessage,
    settles: boolean,
    action: (received: ServiceBusReceivedMessage) => Promise<T>,
  ): Promise<T> {
    const token = message.lockToken;
    const received = token === undefined ? undefined : this.locked.get(token);
    if (token === undefined || received === undefined) {
      throw new MessageLockLostError(this.name, message.messageId);
    }
    try {
      // Settlements one at a time (serial-settlement.ts); a lock renewal is no disposition.
      const result = await (settles ? this.settle(() => action(received)) : action(received));
      if (settles) this.locked.delete(token);
      return result;
    } catch (error) {
      if (!isLockLost(error)) throw error;
      this.locked.delete(token);
      throw Object.assign(new MessageLockLostError(this.name, message.messageId), { cause: error });
    }
  }

  /** Drops messages whose lock expired more than a lock duration ago: nobody can settle them now. */
  private forgetLongExpiredLocks(): void {
    const cutoff = this.settings.clock.now().getTime() - this.settings.lockDurationMs;
    for (const [token, message] of this.locked) {
      if ((message.lockedUntilUtc?.getTime() ?? 0) < cutoff) this.locked.delete(token);
    }
  }
}

function isLockLost(error: unknown): boolean {
  if (isServiceBusError(error)) return error.code === "MessageLockLost";
  return error instanceof Error && error.message === ALREADY_SETTLED;
}

export function checkPositiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive integer; got ${value}`);
  }
}
