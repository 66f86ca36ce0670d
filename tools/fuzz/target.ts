import type fc from "fast-check";
import type { Tally } from "./tally.js";

/**
 * One thing the fuzzer drives: how its inputs are generated, and how a session of it is opened.
 * A session keeps its state between runs (stores, queues, servers); each run's checks judge what
 * the run did against the state it found, so runs need not start from an empty store.
 */
export interface FuzzTarget<Case> {
  readonly name: string;
  readonly arbitrary: fc.Arbitrary<Case>;
  open(): Promise<TargetSession<Case>>;
}

export interface TargetSession<Case> {
  /** Sends the case's inputs and checks every property; throws a Violation when one breaks. */
  run(value: Case, tally: Tally): Promise<void>;
  close(): Promise<void>;
}
