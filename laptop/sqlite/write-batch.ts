import type { Transaction } from "better-sqlite3";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";

interface PendingWrite {
  /** Runs the write and returns how to answer its caller, which waits for the commit. */
  readonly run: () => () => void;
  readonly reject: (reason: unknown) => void;
}

const batches = new WeakMap<EmbeddedDatabase, WriteBatch>();

/** The one write batch of a connection, shared by every store on it, so a turn's writes commit once. */
export function writeBatchOf(db: EmbeddedDatabase): WriteBatch {
  let batch = batches.get(db);
  if (!batch) {
    batch = new WriteBatch(db);
    batches.set(db, batch);
  }
  return batch;
}

/**
 * Runs the writes asked for during one turn of the event loop in one transaction, and answers each
 * only once that transaction has committed: a caller learns of its write when it is as durable as it
 * was on its own. One by one, each write was a transaction of its own, and on a file each commit
 * appends to the WAL every page it changed: the pages a turn's writes share (the indexes' newest
 * ends, the tables' upper levels) went there once per write. The embedded demo asks for 6 to 16
 * record writes a turn besides its queues' messages (what batching them saved: docs/performance.md,
 * "Work per order against e45f986").
 *
 * When any write of a batch throws, the whole transaction is rolled back and each write is run again
 * on its own, so that one failure is reported to its own caller only, exactly as before batching.
 * A write must therefore change nothing outside the database that running it twice would break.
 */
export class WriteBatch {
  private pending: PendingWrite[] = [];
  private readonly inOneTransaction: Transaction<(writes: readonly PendingWrite[]) => (() => void)[]>;

  constructor(db: EmbeddedDatabase) {
    this.inOneTransaction = db.transaction((writes: readonly PendingWrite[]) =>
      writes.map((write) => write.run()),
    );
  }

  /** `write` runs synchronously inside the batch's transaction; its result is the promise's value. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = () => {
        const value = write();
        return () => resolve(value);
      };
      if (this.pending.push({ run, reject }) === 1) setImmediate(() => this.flush());
    });
  }

  /** Runs the writes waiting for the end of the turn now; nothing when none is waiting. */
  flush(): void {
    const writes = this.pending;
    if (writes.length === 0) return;
    this.pending = [];
    let answers: (() => void)[];
    try {
      // Immediate: the write lock is taken (or waited for) first, as a lone write's statement did.
      answers = this.inOneTransaction.immediate(writes);
    } catch {
      for (const write of writes) runAlone(write);
      return;
    }
    for (const answer of answers) answer();
  }
}

/**
 * Commits the writes still waiting for the end of the turn, then closes the connection: a write asked
 * for just before a shutdown is committed and answered rather than refused for a closed connection.
 */
export function closeDatabase(db: EmbeddedDatabase): void {
  if (db.open) batches.get(db)?.flush();
  db.close();
}

function runAlone(write: PendingWrite): void {
  try {
    write.run()();
  } catch (error) {
    write.reject(error);
  }
}
