/** A JSON value: what message bodies are made of. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface OutgoingMessage {
  /** Stable id; a second send with the same id inside the duplicate-detection window is dropped. */
  readonly messageId: string;
  readonly body: JsonValue;
  readonly correlationId?: string;
  readonly subject?: string;
  readonly applicationProperties?: Readonly<Record<string, string | number | boolean>>;
  /** Not delivered before this time (Service Bus scheduled messages). */
  readonly scheduledEnqueueTime?: Date;
}

export interface ReceivedMessage {
  readonly messageId: string;
  readonly body: JsonValue;
  readonly correlationId: string | undefined;
  readonly subject: string | undefined;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
  readonly sequenceNumber: number;
  readonly enqueuedTime: Date;
  /** 1 on first delivery; each new lock on the message adds one. */
  readonly deliveryCount: number;
  /** Identifies this delivery's lock; settling with it after the lock is lost fails. Absent for peeked messages. */
  readonly lockToken: string | undefined;
  readonly lockedUntil: Date | undefined;
  /** Set on messages in a dead-letter queue. */
  readonly deadLetterReason: string | undefined;
  readonly deadLetterErrorDescription: string | undefined;
}

/**
 * What the queue knows of a send. The embedded queue counts duplicates exactly. Service Bus drops
 * duplicates silently, so its adapter counts only repeats of ids it sent itself inside the window.
 */
export interface SendResult {
  readonly accepted: number;
  /** Messages dropped by duplicate detection, where the adapter can tell. */
  readonly duplicates: number;
}

export interface DeadLetterDetails {
  readonly reason: string;
  readonly description: string;
}

/** Receive and settle, peek-lock style. */
export interface QueueReceiver {
  readonly name: string;
  /** Locks and returns up to `maxMessages` available messages, in sequence order. */
  receive(maxMessages: number): Promise<ReceivedMessage[]>;
  complete(message: ReceivedMessage): Promise<void>;
  /** Releases the lock so the message is delivered again (past the maximum delivery count: dead-lettered). */
  abandon(message: ReceivedMessage): Promise<void>;
  deadLetter(message: ReceivedMessage, details: DeadLetterDetails): Promise<void>;
  /** Extends the lock by the queue's lock duration and returns the new expiry. */
  renewLock(message: ReceivedMessage): Promise<Date>;
  /**
   * Returns up to `maxMessages` messages from `fromSequenceNumber` (default: the first), locked or not,
   * without locking them or counting a delivery. Peeked messages carry no lock token and cannot be settled.
   */
  peek(maxMessages: number, fromSequenceNumber?: number): Promise<ReceivedMessage[]>;
}

export interface QueueOptions {
  readonly lockDurationMs: number;
  readonly maxDeliveryCount: number;
  readonly duplicateDetectionWindowMs: number;
}

export const DEFAULT_QUEUE_OPTIONS: QueueOptions = {
  lockDurationMs: 60_000,
  maxDeliveryCount: 10,
  duplicateDetectionWindowMs: 10 * 60_000,
};

/** Reason set when the broker dead-letters a message that was delivered too often. */
export const MAX_DELIVERY_COUNT_EXCEEDED = "MaxDeliveryCountExceeded";

/**
 * A queue with Service Bus semantics: peek-lock delivery, delivery count, dead-lettering (by the
 * receiver with a reason, or by the broker past the maximum delivery count), duplicate detection by
 * message id.
 */
export interface MessageQueue extends QueueReceiver {
  readonly options: QueueOptions;
  send(messages: OutgoingMessage | readonly OutgoingMessage[]): Promise<SendResult>;
  /** The queue's dead-letter sub-queue (`<name>/$deadletterqueue`). */
  readonly deadLetterQueue: QueueReceiver;
}

/** Settling with a lock that expired, or that belongs to an earlier delivery. */
export class MessageLockLostError extends Error {
  override readonly name = "MessageLockLostError";
  readonly kind = "MessageLockLost" as const;
  constructor(
    readonly queue: string,
    readonly messageId: string,
  ) {
    super(`the lock on message ${messageId} in ${queue} was lost (expired, or the message was settled)`);
  }
}

/** Service Bus's limit on a message id. */
export const MAX_MESSAGE_ID_LENGTH = 128;

/** What every adapter refuses before sending anything: an id Service Bus would refuse, or an invalid schedule. */
export function checkOutgoingMessage(message: OutgoingMessage): void {
  const id = message.messageId;
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_MESSAGE_ID_LENGTH) {
    throw new RangeError(
      `messageId must be 1 to ${MAX_MESSAGE_ID_LENGTH} characters; got ${JSON.stringify(id)}`,
    );
  }
  const scheduled = message.scheduledEnqueueTime;
  if (scheduled !== undefined && Number.isNaN(scheduled.getTime())) {
    throw new RangeError(`scheduledEnqueueTime of message ${id} is not a valid date`);
  }
}
