import type { BreakerState } from "../domain/circuit-breaker.js";

export type { BreakerState };

/** A breaker's state as stored, with the version a conditional write must name. */
export interface StoredBreaker {
  readonly state: BreakerState;
  /** Opaque: changes with every write (an ETag, a row version). */
  readonly version: string;
}

export interface StoredBreakerEntry extends StoredBreaker {
  readonly operation: string;
}

export type BreakerWrite = { readonly written: true; readonly version: string } | { readonly written: false };

/**
 * Where the circuit breakers' states live, one per partner operation, shared by every Agent instance:
 * beside the host's other shared state (the state store's database). Writes are optimistic: each names
 * the version it read, and loses to any write made since.
 */
export interface BreakerStore {
  /** The operation's breaker, or undefined when none was ever written. */
  read(operation: string): Promise<StoredBreaker | undefined>;
  /**
   * Writes `state` if the stored version is still `expectedVersion` (undefined: only if none is stored).
   * Answers the new version, or `written: false` when another write came first; nothing is written then.
   */
  write(operation: string, state: BreakerState, expectedVersion: string | undefined): Promise<BreakerWrite>;
  /** Every stored breaker, by operation name. */
  readAll(): Promise<readonly StoredBreakerEntry[]>;
}
