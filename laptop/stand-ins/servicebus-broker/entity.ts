import { randomUUID } from "node:crypto";
import type { Clock } from "../../../src/ports/clock.js";
import { MAX_DELIVERY_COUNT_EXCEEDED, type QueueOptions } from "../../../src/ports/message-queue.js";
import { LockLostError, OperationNotAllowedError } from "./errors.js";
import type { QueueJournal, RestoredQueue } from "./queue-file.js";
import { type AmqpMessage, ANNOTATIONS, type StoredMessage, type SubQueueKind } from "./wire.js";

export type { StoredMessage, SubQueueKind } from "./wire.js";

export interface DeadLetterInfo {
  readonly reason: string | undefined;
  readonly description: string | undefined;
}

type Properties = Record<string, unknown>;

/** What clients had a queue do, for whoever counts the broker's work (the bench); peeks count requests. */
export type QueueOperation =
  | "send"
  | "receive"
  | "complete"
  | "abandon"
  | "deadLetter"
  | "renewLock"
  | "peek";
export type QueueObserver = (operation: QueueOperation, queue: string, messages: number) => void;

class SubQueue {
  readonly messages = new Map<number, StoredMessage>();
  readonly locks = new Map<string, StoredMessage>();

  inSequenceOrder(): StoredMessage[] {
    return [...this.messages.values()].sort((a, b) => a.sequenceNumber - b.sequenceNumber);
  }

  remove(message: StoredMessage): void {
    this.messages.delete(message.sequenceNumber);
    this.unlock(message);
  }

  unlock(message: StoredMessage): void {
    if (message.lock) this.locks.delete(message.lock.token);
    message.lock = undefined;
  }
}

/**
 * One queue and its dead-letter sub-queue, with Service Bus semantics judged by the given clock. Time
 * passing changes nothing by itself: expired locks are released, and dead-lettered past the maximum
 * delivery count, the next time anyone touches the queue.
 */
export class QueueEntity {
  private readonly subQueues: Record<SubQueueKind, SubQueue> = {
    active: new SubQueue(),
    deadLetter: new SubQueue(),
  };
  private nextSequenceNumber = 1;
  /** Message id → when it was last accepted, for duplicate detection. */
  private readonly seenIds = new Map<string, number>();
  private readonly availabilityListeners = new Set<() => void>();

  constructor(
    readonly name: string,
    readonly options: QueueOptions,
    private readonly clock: Clock,
    /** Where every change is written before it is answered; absent, the queue lives in memory only. */
    private readonly journal?: QueueJournal,
    private readonly observe: QueueObserver = () => {},
  ) {}

  /** Takes back what the journal kept, before any client attaches. */
  restore(restored: RestoredQueue): void {
    for (const { kind, message } of restored.messages) {
      this.subQueues[kind].messages.set(message.sequenceNumber, message);
      this.nextSequenceNumber = Math.max(this.nextSequenceNumber, message.sequenceNumber + 1);
    }
    for (const [id, seenAt] of restored.seenIds) this.seenIds.set(id, seenAt);
  }

  /** Called whenever messages may have become available to receivers. */
  onAvailable(listener: () => void): void {
    this.availabilityListeners.add(listener);
  }

  /** Enqueues each message whose id was not accepted inside the duplicate-detection window. */
  enqueue(messages: readonly AmqpMessage[]): void {
    this.observe("send", this.name, messages.length);
    const now = this.now();
    this.forgetIdsSeenBefore(now - this.options.duplicateDetectionWindowMs);
    for (const message of messages) {
      const id = message.message_id === undefined ? undefined : String(message.message_id);
      if (id !== undefined) {
        if (this.seenIds.has(id)) continue;
        this.seenIds.set(id, now);
        this.journal?.seen(this.name, id, now);
      }
      const scheduled = message.message_annotations?.[ANNOTATIONS.scheduledEnqueueTime];
      const availableAt = scheduled instanceof Date ? Math.max(now, scheduled.getTime()) : now;
      const stored: StoredMessage = {
        sequenceNumber: this.nextSequenceNumber++,
        enqueuedAt: availableAt,
        availableAt,
        message,
        failedDeliveries: 0,
        lock: undefined,
      };
      this.subQueues.active.messages.set(stored.sequenceNumber, stored);
      this.journal?.saved(this.name, "active", stored);
    }
    this.notifyAvailable();
  }

  /** Locks and returns up to `max` available messages, in sequence order. */
  lock(kind: SubQueueKind, max: number): StoredMessage[] {
    const now = this.expireLocks();
    const queue = this.subQueues[kind];
    const locked: StoredMessage[] = [];
    for (const message of queue.inSequenceOrder()) {
      if (locked.length >= max) break;
      if (message.lock || message.availableAt > now) continue;
      message.lock = { token: randomUUID(), lockedUntil: now + this.options.lockDurationMs };
      queue.locks.set(message.lock.token, message);
      locked.push(message);
    }
    if (locked.length > 0) this.observe("receive", this.name, locked.length);
    return locked;
  }

  complete(kind: SubQueueKind, lockToken: string): void {
    const message = this.held(kind, lockToken);
    this.subQueues[kind].remove(message);
    this.journal?.removed(this.name, message);
    this.observe("complete", this.name, 1);
  }

  abandon(kind: SubQueueKind, lockToken: string, properties: Properties = {}): void {
    const message = this.held(kind, lockToken);
    modifyProperties(message, properties);
    this.failDelivery(kind, message);
    this.observe("abandon", this.name, 1);
    this.notifyAvailable();
  }

  deadLetter(kind: SubQueueKind, lockToken: string, info: DeadLetterInfo, properties: Properties = {}): void {
    if (kind === "deadLetter") {
      throw new OperationNotAllowedError("a dead-lettered message cannot be dead-lettered");
    }
    const message = this.held(kind, lockToken);
    modifyProperties(message, properties);
    this.moveToDeadLetter(message, info);
    this.observe("deadLetter", this.name, 1);
  }

  /** Extends the lock by the lock duration from now; returns the new expiry. */
  renewLock(kind: SubQueueKind, lockToken: string): number {
    const message = this.held(kind, lockToken);
    const lock = message.lock as NonNullable<StoredMessage["lock"]>;
    lock.lockedUntil = this.now() + this.options.lockDurationMs;
    this.observe("renewLock", this.name, 1);
    return lock.lockedUntil;
  }

  /** Up to `max` messages from `fromSequenceNumber`, locked or not, scheduled included. */
  peek(kind: SubQueueKind, fromSequenceNumber: number, max: number): StoredMessage[] {
    this.observe("peek", this.name, 1);
    this.expireLocks();
    return this.subQueues[kind]
      .inSequenceOrder()
      .filter((m) => m.sequenceNumber >= fromSequenceNumber)
      .slice(0, max);
  }

  private held(kind: SubQueueKind, lockToken: string): StoredMessage {
    this.expireLocks();
    const message = this.subQueues[kind].locks.get(lockToken);
    if (!message) {
      throw new LockLostError(
        `The lock supplied is invalid. Either the lock expired, or the message has already been removed from ${this.name}.`,
      );
    }
    return message;
  }

  /** Releases every lock that has expired, counting a failed delivery for each; returns now. */
  private expireLocks(): number {
    const now = this.now();
    let released = false;
    for (const kind of ["active", "deadLetter"] as const) {
      for (const message of [...this.subQueues[kind].locks.values()]) {
        if ((message.lock?.lockedUntil ?? Number.POSITIVE_INFINITY) > now) continue;
        this.failDelivery(kind, message);
        released = true;
      }
    }
    if (released) this.notifyAvailable();
    return now;
  }

  private failDelivery(kind: SubQueueKind, message: StoredMessage): void {
    this.subQueues[kind].unlock(message);
    message.failedDeliveries++;
    if (kind === "active" && message.failedDeliveries >= this.options.maxDeliveryCount) {
      this.moveToDeadLetter(message, {
        reason: MAX_DELIVERY_COUNT_EXCEEDED,
        description: `Message could not be consumed after ${message.failedDeliveries} delivery attempts.`,
      });
    } else {
      this.journal?.saved(this.name, kind, message);
    }
  }

  private moveToDeadLetter(message: StoredMessage, info: DeadLetterInfo): void {
    this.subQueues.active.remove(message);
    const properties: Properties = { ...message.message.application_properties };
    if (info.reason !== undefined) properties.DeadLetterReason = info.reason;
    if (info.description !== undefined) properties.DeadLetterErrorDescription = info.description;
    message.message = { ...message.message, application_properties: properties };
    this.subQueues.deadLetter.messages.set(message.sequenceNumber, message);
    this.journal?.saved(this.name, "deadLetter", message);
  }

  /** Ids are kept in the order they were seen, so the expired ones come first. */
  private forgetIdsSeenBefore(cutoff: number): void {
    let forgot = false;
    for (const [id, seenAt] of this.seenIds) {
      if (seenAt > cutoff) break;
      this.seenIds.delete(id);
      forgot = true;
    }
    if (forgot) this.journal?.forgotten(this.name, cutoff);
  }

  private notifyAvailable(): void {
    for (const listener of this.availabilityListeners) listener();
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}

function modifyProperties(message: StoredMessage, properties: Properties): void {
  if (Object.keys(properties).length === 0) return;
  message.message = {
    ...message.message,
    application_properties: { ...message.message.application_properties, ...properties },
  };
}
