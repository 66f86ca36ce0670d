import type { BreakerState } from "../../src/domain/circuit-breaker.js";
import type {
  BreakerStore,
  BreakerWrite,
  StoredBreaker,
  StoredBreakerEntry,
} from "../../src/ports/breaker-store.js";
import type { Clock } from "../../src/ports/clock.js";

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

/**
 * A breaker store that takes its time on a clock (a virtual one in tests): each read and each write of
 * `inner` starts after `delays.readMs` / `delays.writeMs`, which a test may change as it goes.
 */
export class SlowBreakerStore implements BreakerStore {
  constructor(
    private readonly inner: BreakerStore,
    private readonly clock: Clock,
    readonly delays: { readMs: number; writeMs: number },
  ) {}

  async read(operation: string): Promise<StoredBreaker | undefined> {
    await this.clock.sleep(this.delays.readMs);
    return this.inner.read(operation);
  }

  async write(
    operation: string,
    state: BreakerState,
    expectedVersion: string | undefined,
  ): Promise<BreakerWrite> {
    await this.clock.sleep(this.delays.writeMs);
    return this.inner.write(operation, state, expectedVersion);
  }

  readAll(): Promise<readonly StoredBreakerEntry[]> {
    return this.inner.readAll();
  }
}
