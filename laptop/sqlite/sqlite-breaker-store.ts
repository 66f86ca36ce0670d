import type { Statement } from "better-sqlite3";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import { checkedBreakerState } from "../../src/domain/breaker-state-schema.js";
import type { BreakerState } from "../../src/domain/circuit-breaker.js";
import type {
  BreakerStore,
  BreakerWrite,
  StoredBreaker,
  StoredBreakerEntry,
} from "../../src/ports/breaker-store.js";

interface BreakerRow {
  operation: string;
  version: number;
  state: string;
}

/**
 * The circuit breakers on the embedded database: one row per operation (`breakers`, migration 11) with a
 * version that each write increments, and writes conditional on it. Every process and thread that opens
 * the database file shares them.
 */
export class SqliteBreakerStore implements BreakerStore {
  private readonly select: Statement<[string], BreakerRow>;
  private readonly selectAll: Statement<[], BreakerRow>;
  private readonly insert: Statement<[string, string]>;
  private readonly update: Statement<[string, string, number]>;

  constructor(db: EmbeddedDatabase) {
    this.select = db.prepare("SELECT operation, version, state FROM breakers WHERE operation = ?");
    this.selectAll = db.prepare("SELECT operation, version, state FROM breakers ORDER BY operation");
    this.insert = db.prepare(
      "INSERT INTO breakers (operation, version, state) VALUES (?, 1, ?) ON CONFLICT (operation) DO NOTHING",
    );
    this.update = db.prepare(
      "UPDATE breakers SET state = ?, version = version + 1 WHERE operation = ? AND version = ?",
    );
  }

  async read(operation: string): Promise<StoredBreaker | undefined> {
    const row = this.select.get(operation);
    return row ? stored(row) : undefined;
  }

  async write(
    operation: string,
    state: BreakerState,
    expectedVersion: string | undefined,
  ): Promise<BreakerWrite> {
    const json = JSON.stringify(state);
    if (expectedVersion === undefined) {
      return this.insert.run(operation, json).changes === 1
        ? { written: true, version: "1" }
        : { written: false };
    }
    const version = Number(expectedVersion);
    if (!Number.isSafeInteger(version)) return { written: false };
    const { changes } = this.update.run(json, operation, version);
    return changes === 1 ? { written: true, version: String(version + 1) } : { written: false };
  }

  async readAll(): Promise<readonly StoredBreakerEntry[]> {
    return this.selectAll.all().map((row) => ({ operation: row.operation, ...stored(row) }));
  }
}

function stored(row: BreakerRow): StoredBreaker {
  return {
    state: checkedBreakerState(JSON.parse(row.state), `circuit breaker of ${row.operation}`),
    version: String(row.version),
  };
}
