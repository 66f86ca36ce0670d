import { randomUUID } from "node:crypto";
import type { RunResult, Statement } from "better-sqlite3";
import { BOUND_LIMIT } from "../../src/adapters/sqlite/bound-limit.js";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import type { Clock } from "../../src/ports/clock.js";
import {
  checkOutgoingMessage,
  DEFAULT_QUEUE_OPTIONS,
  type DeadLetterDetails,
  type JsonValue,
  MAX_DELIVERY_COUNT_EXCEEDED,
  MessageLockLostError,
  type MessageQueue,
  type OutgoingMessage,
  type QueueOptions,
  type QueueReceiver,
  type ReceivedMessage,
  type SendResult,
} from "../../src/ports/message-queue.js";
import { type WriteBatch, writeBatchOf } from "./write-batch.js";

interface MessageRow {
  sequence_number: number;
  message_id: string;
  body: string;
  correlation_id: string | null;
  subject: string | null;
  application_properties: string;
  enqueued_at: number;
  delivery_count: number;
  lock_token: string | null;
  locked_until: number | null;
  dead_letter_reason: string | null;
  dead_letter_description: string | null;
}

/** What settling a message needs of its row. */
type LockedRow = Pick<MessageRow, "sequence_number" | "delivery_count">;

/** Where dead-lettered messages go, and after how many deliveries the queue sends them itself. */
interface DeadLettering {
  readonly queue: string;
  readonly maxDeliveryCount: number;
}

/**
 * Peek-lock receiving over the rows of one queue name in `queue_messages`. A message is locked while
 * `locked_until` is later than the clock's now; an expired lock makes it available again. Every change
 * runs in the connection's write batch (`write-batch.ts`), an IMMEDIATE transaction, so two connections
 * to one file never lock one message, and a caller hears of its change once it is committed.
 */
class SqliteQueueReceiver implements QueueReceiver {
  private readonly available: Statement<[string, number, number, number], MessageRow>;
  private readonly lock: Statement<[string, number, number]>;
  private readonly lockedRow: Statement<[number, string, string, number], LockedRow>;
  private readonly removeLocked: Statement<[number, string, string, number]>;
  private readonly extendLocked: Statement<[number, number, string, string, number]>;
  private readonly moveToDeadLetter: Statement<[string, string, string, number]>;
  private readonly unlock: Statement<[number]>;
  private readonly peekFrom: Statement<[string, number, number], MessageRow>;
  protected readonly writes: WriteBatch;

  constructor(
    db: EmbeddedDatabase,
    protected readonly clock: Clock,
    readonly name: string,
    private readonly lockDurationMs: number,
    private readonly deadLettering: DeadLettering | undefined,
  ) {
    this.available = db.prepare(
      `SELECT * FROM queue_messages
       WHERE queue = ? AND available_at <= ? AND (locked_until IS NULL OR locked_until <= ?)
       ORDER BY sequence_number LIMIT ${BOUND_LIMIT}`,
    );
    this.lock = db.prepare(
      `UPDATE queue_messages SET lock_token = ?, locked_until = ?, delivery_count = delivery_count + 1
       WHERE sequence_number = ?`,
    );
    const holdsLock = "sequence_number = ? AND queue = ? AND lock_token = ? AND locked_until > ?";
    this.lockedRow = db.prepare(
      `SELECT sequence_number, delivery_count FROM queue_messages WHERE ${holdsLock}`,
    );
    // One statement each, atomic without a transaction: it changes the row only while the lock holds.
    this.removeLocked = db.prepare(`DELETE FROM queue_messages WHERE ${holdsLock}`);
    this.extendLocked = db.prepare(`UPDATE queue_messages SET locked_until = ? WHERE ${holdsLock}`);
    this.moveToDeadLetter = db.prepare(
      `UPDATE queue_messages SET queue = ?, lock_token = NULL, locked_until = NULL,
         dead_letter_reason = ?, dead_letter_description = ?
       WHERE sequence_number = ?`,
    );
    this.unlock = db.prepare(
      "UPDATE queue_messages SET lock_token = NULL, locked_until = NULL WHERE sequence_number = ?",
    );
    this.writes = writeBatchOf(db);
    this.peekFrom = db.prepare(
      `SELECT * FROM queue_messages WHERE queue = ? AND sequence_number >= ? ORDER BY sequence_number LIMIT ${BOUND_LIMIT}`,
    );
  }

  async receive(maxMessages: number): Promise<ReceivedMessage[]> {
    checkPositiveInteger("maxMessages", maxMessages);
    // The time of the request, not of the batch's commit a turn later (one a virtual clock may have moved).
    const now = this.clock.now().getTime();
    return this.writes.run(() => {
      const received: ReceivedMessage[] = [];
      // Candidates moved to the dead-letter queue free their slot, so look again until full or empty.
      for (;;) {
        const wanted = maxMessages - received.length;
        const candidates = this.available.all(this.name, now, now, wanted);
        for (const row of candidates) {
          if (this.autoDeadLettered(row)) continue;
          const lock = { token: randomUUID(), until: now + this.lockDurationMs };
          // The transaction holds the write lock, so the row is the candidate with the lock's changes.
          if (this.lock.run(lock.token, lock.until, row.sequence_number).changes === 1) {
            received.push(toMessage({ ...row, delivery_count: row.delivery_count + 1 }, lock));
          }
        }
        // Fewer than wanted: every available message was a candidate, and none is left.
        if (received.length === maxMessages || candidates.length < wanted) return received;
      }
    });
  }

  async complete(message: ReceivedMessage): Promise<void> {
    return this.whileLocked(message, (token, now) =>
      this.removeLocked.run(message.sequenceNumber, this.name, token, now),
    );
  }

  async abandon(message: ReceivedMessage): Promise<void> {
    return this.settle(message, (row) => {
      if (!this.autoDeadLettered(row)) this.unlock.run(row.sequence_number);
    });
  }

  async deadLetter(message: ReceivedMessage, details: DeadLetterDetails): Promise<void> {
    const target = this.deadLettering?.queue;
    if (target === undefined) throw new Error(`${this.name} is a dead-letter queue; it cannot dead-letter`);
    return this.settle(message, (row) => {
      this.moveToDeadLetter.run(target, details.reason, details.description, row.sequence_number);
    });
  }

  /**
   * Not batched: a renewal is rare (one per message every half lock duration), and the consumer times
   * the next one from when this one ends, so it ends without waiting for the turn's batch.
   */
  async renewLock(message: ReceivedMessage): Promise<Date> {
    const token = lockTokenOf(message);
    const now = this.clock.now().getTime();
    const lockedUntil = now + this.lockDurationMs;
    this.changedWhileLocked(
      message,
      this.extendLocked.run(lockedUntil, message.sequenceNumber, this.name, token, now),
    );
    return new Date(lockedUntil);
  }

  async peek(maxMessages: number, fromSequenceNumber = 0): Promise<ReceivedMessage[]> {
    checkPositiveInteger("maxMessages", maxMessages);
    if (!Number.isSafeInteger(fromSequenceNumber) || fromSequenceNumber < 0) {
      throw new RangeError(`fromSequenceNumber must be a non-negative integer; got ${fromSequenceNumber}`);
    }
    return this.peekFrom.all(this.name, fromSequenceNumber, maxMessages).map((row) => toMessage(row));
  }

  /**
   * Runs `change`, one statement that changes the message's row only while `message` holds its lock;
   * throws MessageLockLostError if it changed nothing.
   */
  private whileLocked(
    message: ReceivedMessage,
    change: (token: string, now: number) => RunResult,
  ): Promise<void> {
    const token = lockTokenOf(message);
    const now = this.clock.now().getTime();
    return this.writes.run(() => this.changedWhileLocked(message, change(token, now)));
  }

  /** Throws MessageLockLostError when a change conditional on `message`'s lock changed nothing. */
  private changedWhileLocked(message: ReceivedMessage, result: RunResult): void {
    if (result.changes === 0) throw new MessageLockLostError(this.name, message.messageId);
  }

  /** Runs `action` on the message's row if `message` still holds its lock; throws MessageLockLostError if not. */
  private settle<T>(message: ReceivedMessage, action: (row: LockedRow, now: number) => T): Promise<T> {
    const token = lockTokenOf(message);
    const now = this.clock.now().getTime();
    return this.writes.run(() => {
      const row = this.lockedRow.get(message.sequenceNumber, this.name, token, now);
      if (!row) throw new MessageLockLostError(this.name, message.messageId);
      return action(row, now);
    });
  }

  /** Dead-letters the row if it has used up its deliveries (as Service Bus does); true if it did. */
  private autoDeadLettered(row: LockedRow): boolean {
    if (!this.deadLettering || row.delivery_count < this.deadLettering.maxDeliveryCount) return false;
    this.moveToDeadLetter.run(
      this.deadLettering.queue,
      MAX_DELIVERY_COUNT_EXCEEDED,
      `Message could not be consumed after ${row.delivery_count} delivery attempts.`,
      row.sequence_number,
    );
    return true;
  }
}

/**
 * A Service Bus style queue in the embedded database: peek-lock delivery, delivery count, duplicate
 * detection by message id, scheduled messages, and a dead-letter sub-queue kept in the same table
 * under the name `<name>/$deadletterqueue`. Times come from the injected clock, so every connection
 * sharing the database file must share a time source.
 */
export class SqliteMessageQueue extends SqliteQueueReceiver implements MessageQueue {
  readonly options: QueueOptions;
  readonly deadLetterQueue: QueueReceiver;
  private readonly rememberId: Statement<[string, string, number, number]>;
  private readonly forgetIdsBefore: Statement<[string, number]>;
  private readonly insert: Statement<
    [string, string, string, string | null, string | null, string, number, number]
  >;
  private nextPruneAt = 0;

  constructor(db: EmbeddedDatabase, clock: Clock, name: string, options: Partial<QueueOptions> = {}) {
    const resolved = resolveOptions(options);
    if (name.length === 0) throw new RangeError("name must not be empty");
    const deadLetterQueueName = `${name}/$deadletterqueue`;
    super(db, clock, name, resolved.lockDurationMs, {
      queue: deadLetterQueueName,
      maxDeliveryCount: resolved.maxDeliveryCount,
    });
    this.options = resolved;
    this.deadLetterQueue = new SqliteQueueReceiver(
      db,
      clock,
      deadLetterQueueName,
      resolved.lockDurationMs,
      undefined,
    );
    // Changes nothing (0 changes) when the id was seen inside the window; an expired id is taken over.
    this.rememberId = db.prepare(
      `INSERT INTO queue_message_ids (queue, message_id, enqueued_at) VALUES (?, ?, ?)
       ON CONFLICT (queue, message_id) DO UPDATE SET enqueued_at = excluded.enqueued_at
       WHERE queue_message_ids.enqueued_at <= ?`,
    );
    this.forgetIdsBefore = db.prepare("DELETE FROM queue_message_ids WHERE queue = ? AND enqueued_at <= ?");
    this.insert = db.prepare(
      `INSERT INTO queue_messages (queue, message_id, body, correlation_id, subject, application_properties,
         enqueued_at, available_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  async send(messages: OutgoingMessage | readonly OutgoingMessage[]): Promise<SendResult> {
    const batch = isBatch(messages) ? messages : [messages];
    for (const message of batch) checkOutgoingMessage(message);
    const now = this.clock.now().getTime();
    return this.writes.run(() => {
      const expiredBefore = now - this.options.duplicateDetectionWindowMs;
      // rememberId already ignores expired ids, so pruning only keeps the table small: once a window is enough.
      if (now >= this.nextPruneAt) {
        this.forgetIdsBefore.run(this.name, expiredBefore);
        this.nextPruneAt = now + this.options.duplicateDetectionWindowMs;
      }
      let accepted = 0;
      for (const message of batch) {
        if (this.rememberId.run(this.name, message.messageId, now, expiredBefore).changes === 0) continue;
        this.insert.run(
          this.name,
          message.messageId,
          JSON.stringify(message.body),
          message.correlationId ?? null,
          message.subject ?? null,
          JSON.stringify(message.applicationProperties ?? {}),
          now,
          message.scheduledEnqueueTime?.getTime() ?? now,
        );
        accepted++;
      }
      return { accepted, duplicates: batch.length - accepted };
    });
  }
}

function lockTokenOf(message: ReceivedMessage): string {
  const token = message.lockToken;
  if (token === undefined) {
    throw new Error(
      `message ${message.messageId} was peeked, not received; only a locked message can be settled`,
    );
  }
  return token;
}

/** The message in `row`; with the lock it was received under, if it was received rather than peeked. */
function toMessage(
  row: MessageRow,
  lock?: { readonly token: string; readonly until: number },
): ReceivedMessage {
  return {
    messageId: row.message_id,
    body: JSON.parse(row.body) as JsonValue,
    correlationId: row.correlation_id ?? undefined,
    subject: row.subject ?? undefined,
    applicationProperties: JSON.parse(row.application_properties) as Record<
      string,
      string | number | boolean
    >,
    sequenceNumber: row.sequence_number,
    enqueuedTime: new Date(row.enqueued_at),
    deliveryCount: row.delivery_count,
    lockToken: lock?.token,
    lockedUntil: lock ? new Date(lock.until) : undefined,
    deadLetterReason: row.dead_letter_reason ?? undefined,
    deadLetterErrorDescription: row.dead_letter_description ?? undefined,
  };
}

function resolveOptions(options: Partial<QueueOptions>): QueueOptions {
  const resolved = { ...DEFAULT_QUEUE_OPTIONS, ...options };
  checkPositiveInteger("lockDurationMs", resolved.lockDurationMs);
  checkPositiveInteger("maxDeliveryCount", resolved.maxDeliveryCount);
  checkPositiveInteger("duplicateDetectionWindowMs", resolved.duplicateDetectionWindowMs);
  return resolved;
}

function checkPositiveInteger(option: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${option} must be a positive integer; got ${value}`);
  }
}

function isBatch(
  messages: OutgoingMessage | readonly OutgoingMessage[],
): messages is readonly OutgoingMessage[] {
  return Array.isArray(messages);
}
