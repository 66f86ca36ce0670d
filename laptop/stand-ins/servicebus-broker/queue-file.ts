import rhea from "rhea";
import { type EmbeddedDatabase, openDatabase } from "../../../src/adapters/sqlite/database.js";
import type { Migration } from "../../../src/adapters/sqlite/migrations.js";
import type { AmqpMessage, StoredMessage, SubQueueKind } from "./wire.js";

/** What a queue tells its journal, each before the broker answers the client that caused it. */
export interface QueueJournal {
  /** A message was enqueued, or changed: its delivery count, properties or sub-queue. */
  saved(queue: string, kind: SubQueueKind, message: StoredMessage): void;
  /** A message was completed. */
  removed(queue: string, message: StoredMessage): void;
  /** A message id was accepted, at this time (duplicate detection). */
  seen(queue: string, messageId: string, at: number): void;
  /** Ids seen at or before this time left the duplicate-detection window. */
  forgotten(queue: string, cutoff: number): void;
}

/** A queue's contents as its journal kept them; locks are not kept, so every message comes back unlocked. */
export interface RestoredQueue {
  readonly messages: readonly { readonly kind: SubQueueKind; readonly message: StoredMessage }[];
  readonly seenIds: readonly (readonly [string, number])[];
}

const QUEUE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "the Service Bus stand-in's queues: messages and the ids seen for duplicate detection",
    sql: `CREATE TABLE queue_messages (
      queue            TEXT NOT NULL,
      sequence_number  INTEGER NOT NULL,
      kind             TEXT NOT NULL,
      enqueued_at      INTEGER NOT NULL,
      available_at     INTEGER NOT NULL,
      failed_deliveries INTEGER NOT NULL,
      message          BLOB NOT NULL,
      PRIMARY KEY (queue, sequence_number)
    );
    CREATE TABLE queue_seen_ids (
      queue      TEXT NOT NULL,
      message_id TEXT NOT NULL,
      seen_at    INTEGER NOT NULL,
      PRIMARY KEY (queue, message_id)
    );
    CREATE INDEX queue_seen_ids_by_time ON queue_seen_ids (queue, seen_at);`,
  },
];

export interface QueueFile {
  readonly journal: QueueJournal;
  restore(queue: string): RestoredQueue;
  close(): void;
}

/**
 * The broker's queues in a SQLite file, so that they survive the process: each change a row written
 * before the client hears of it (WAL, `synchronous=NORMAL`: a killed process loses nothing it
 * answered; a power loss may lose the last commits). Messages are kept as AMQP encodes them.
 */
export function openQueueFile(path: string): QueueFile {
  const db: EmbeddedDatabase = openDatabase(path, { synchronous: "NORMAL", migrations: QUEUE_MIGRATIONS });
  const save = db.prepare(
    `INSERT INTO queue_messages (queue, sequence_number, kind, enqueued_at, available_at, failed_deliveries, message)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (queue, sequence_number) DO UPDATE SET
       kind = excluded.kind, failed_deliveries = excluded.failed_deliveries, message = excluded.message`,
  );
  const remove = db.prepare("DELETE FROM queue_messages WHERE queue = ? AND sequence_number = ?");
  const seen = db.prepare(
    `INSERT INTO queue_seen_ids (queue, message_id, seen_at) VALUES (?, ?, ?)
     ON CONFLICT (queue, message_id) DO UPDATE SET seen_at = excluded.seen_at`,
  );
  const forget = db.prepare("DELETE FROM queue_seen_ids WHERE queue = ? AND seen_at <= ?");
  const journal: QueueJournal = {
    saved: (queue, kind, m) =>
      void save.run(
        queue,
        m.sequenceNumber,
        kind,
        m.enqueuedAt,
        m.availableAt,
        m.failedDeliveries,
        rhea.message.encode(m.message),
      ),
    removed: (queue, m) => void remove.run(queue, m.sequenceNumber),
    seen: (queue, messageId, at) => void seen.run(queue, messageId, at),
    forgotten: (queue, cutoff) => void forget.run(queue, cutoff),
  };
  return {
    journal,
    restore: (queue) => restoreQueue(db, queue),
    close: () => db.close(),
  };
}

interface MessageRow {
  readonly sequence_number: number;
  readonly kind: SubQueueKind;
  readonly enqueued_at: number;
  readonly available_at: number;
  readonly failed_deliveries: number;
  readonly message: Buffer;
}

function restoreQueue(db: EmbeddedDatabase, queue: string): RestoredQueue {
  const rows = db
    .prepare("SELECT * FROM queue_messages WHERE queue = ? ORDER BY sequence_number")
    .all(queue) as MessageRow[];
  const seenIds = db
    .prepare("SELECT message_id, seen_at FROM queue_seen_ids WHERE queue = ? ORDER BY seen_at")
    .raw()
    .all(queue) as [string, number][];
  return {
    messages: rows.map((row) => ({
      kind: row.kind,
      message: {
        sequenceNumber: row.sequence_number,
        enqueuedAt: row.enqueued_at,
        availableAt: row.available_at,
        failedDeliveries: row.failed_deliveries,
        message: rhea.message.decode(row.message) as AmqpMessage,
        lock: undefined,
      },
    })),
    seenIds,
  };
}
