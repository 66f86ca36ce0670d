import type { BreakerState } from "../../src/domain/circuit-breaker.js";
import type {
  BreakerStore,
  BreakerWrite,
  StoredBreaker,
  StoredBreakerEntry,
} from "../../src/ports/breaker-store.js";

/**
 * Circuit breakers in memory, for tests: states are copied in and out as JSON, as a real store would,
 * so no caller can change a stored state by holding on to it. Counts the requests made of it.
 */
export class MemoryBreakerStore implements BreakerStore {
  private readonly rows = new Map<string, { readonly json: string; readonly version: number }>();
  reads = 0;
  writes = 0;

  async read(operation: string): Promise<StoredBreaker | undefined> {
    this.reads++;
    const row = this.rows.get(operation);
    return row ? { state: JSON.parse(row.json) as BreakerState, version: String(row.version) } : undefined;
  }

  async write(
    operation: string,
    state: BreakerState,
    expectedVersion: string | undefined,
  ): Promise<BreakerWrite> {
    this.writes++;
    const row = this.rows.get(operation);
    const current = row === undefined ? undefined : String(row.version);
    if (current !== expectedVersion) return { written: false };
    const version = (row?.version ?? 0) + 1;
    this.rows.set(operation, { json: JSON.stringify(state), version });
    return { written: true, version: String(version) };
  }

  async readAll(): Promise<readonly StoredBreakerEntry[]> {
    this.reads++;
    return [...this.rows.keys()].sort().map((operation) => {
      const row = this.rows.get(operation);
      if (!row) throw new Error(`breaker ${operation} vanished`);
      return { operation, state: JSON.parse(row.json) as BreakerState, version: String(row.version) };
    });
  }
}
