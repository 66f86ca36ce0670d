import { randomUUID } from "node:crypto";
import { type BreakerView, viewOf } from "../domain/breaker-view.js";
import {
  admit,
  type BreakerAdmission,
  type BreakerOutcome,
  type BreakerPolicy,
  type BreakerState,
  type BreakerStatus,
  CLOSED_BREAKER,
  record,
  recordCalls,
  transitionOf,
  windowTotals,
} from "../domain/circuit-breaker.js";
import type { BreakerStore } from "../ports/breaker-store.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import { within } from "./bounded-wait.js";
import { announceChange, type BreakerChange } from "./breaker-change.js";
import {
  addCall,
  type CallTally,
  countsOf,
  emptyTally,
  mergeTally,
  tallyHasFailures,
  withCall,
} from "./call-tally.js";
import { extendRun, runSince } from "./own-run.js";

export interface SharedBreakerOptions {
  readonly store: BreakerStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly policy: BreakerPolicy;
  /** Off: every call is let through and nothing is counted or stored. Default on. */
  readonly enabled?: boolean;
  /** How long a state read from the store is trusted before it is read again. Default 250 ms. */
  readonly cacheMs?: number;
  /** Called once per change of state, by the instance whose write made it (alerts, metrics). */
  readonly onTransition?: (change: BreakerChange) => void;
  /** A new probe holder's name; default a random UUID. */
  readonly newHolder?: () => string;
  /**
   * The longest `admit` waits for the store before it answers from the state it knew (F24-2); default
   * 1,000 ms. The request goes on, and what it reads or writes is kept when it lands.
   */
  readonly admitWaitMs?: number;
}

export interface AdmitOptions {
  /** The caller waits no longer than this either (the time left before its deadline). */
  readonly waitMs?: number;
}

/** A call let through: report its outcome with it (`SharedBreaker.record`). */
export interface BreakerTicket {
  readonly operation: string;
  readonly holder: string;
  /** The one probe of a half-open breaker: its outcome closes or reopens the breaker. */
  readonly probe: boolean;
}

export type BreakerDecision =
  | { readonly decision: "call" | "probe"; readonly ticket: BreakerTicket }
  | { readonly decision: "defer"; readonly until: Date; readonly status: "open" | "half-open" };

/** How often a conditional write is tried again after losing to another writer. */
const MAX_WRITE_TRIES = 8;
const DEFAULT_CACHE_MS = 250;
const DEFAULT_ADMIT_WAIT_MS = 1_000;

interface Entry {
  /** The state last read or written, and its version (undefined: none stored). */
  known: { readonly state: BreakerState; readonly version: string | undefined } | undefined;
  knownAt: number;
  /** Bumped by every write, so a read that started before one does not replace what it wrote. */
  generation: number;
  reading: Promise<void> | undefined;
  /** This instance's writes, one at a time, so they do not lose to each other. */
  writes: Promise<unknown>;
  /** Calls counted and not yet written. */
  pending: CallTally;
  /**
   * When this instance's own run of transient failures ended, the last `failureRun` of them: it knows
   * the order its calls ended in. Empty after an answer.
   */
  runEnds: number[];
  lastFlushAt: number;
}

/** What one read-modify-write step makes of the current state. */
interface Step<T> {
  /** The state to write; the current one itself when there is nothing to write. */
  readonly next: BreakerState;
  readonly answer: T;
}

/**
 * The circuit breaker of every partner operation, shared through a `BreakerStore` by every Agent
 * instance. It reads a state again only once it is `cacheMs` old, so a closed breaker costs no store
 * request per call; it writes on failures, on probe admissions and outcomes (transitions), and, while a
 * closed breaker has failures to weigh them against, the successes of the last `cacheMs` at most once
 * per `cacheMs`. Each write is conditional on the version read, and is read and made again when another
 * instance wrote first.
 *
 * A store that fails or is slow does not stop calls: `admit` waits for it at most `admitWaitMs` (and no
 * longer than its caller can), then answers from what it knew; `record` counts the outcome in memory
 * before any store request, so a caller need not wait for it, and a write that fails gives its counts
 * back to the next one.
 */
export class SharedBreaker {
  private readonly entries = new Map<string, Entry>();
  private readonly enabled: boolean;
  private readonly cacheMs: number;
  private readonly newHolder: () => string;
  private readonly admitWaitMs: number;

  constructor(private readonly options: SharedBreakerOptions) {
    this.enabled = options.enabled ?? true;
    this.cacheMs = options.cacheMs ?? DEFAULT_CACHE_MS;
    this.newHolder = options.newHolder ?? randomUUID;
    this.admitWaitMs = options.admitWaitMs ?? DEFAULT_ADMIT_WAIT_MS;
    if (!Number.isFinite(this.cacheMs) || this.cacheMs < 0) {
      throw new RangeError(`cacheMs must be a number of at least 0; got ${this.cacheMs}`);
    }
    if (!Number.isFinite(this.admitWaitMs) || this.admitWaitMs < 0) {
      throw new RangeError(`admitWaitMs must be a number of at least 0; got ${this.admitWaitMs}`);
    }
  }

  /**
   * Whether `operation` may be called now: call, call as the probe, or make no call before `until`.
   * Answers within `admitWaitMs` and `options.waitMs`, whatever the store does.
   */
  async admit(operation: string, options: AdmitOptions = {}): Promise<BreakerDecision> {
    const holder = this.newHolder();
    if (!this.enabled) return { decision: "call", ticket: { operation, holder, probe: false } };
    const entry = this.entryOf(operation);
    // A state read within the cache period that needs no probe claimed costs no request and no timer.
    if (!this.isStale(entry)) {
      const known = this.decide(operation, entry, holder);
      if (known.decision !== "probe") return known;
    }
    const waitMs = Math.max(0, Math.min(this.admitWaitMs, options.waitMs ?? Number.POSITIVE_INFINITY));
    const asked = await within(this.options.clock, this.admitFromStore(operation, entry, holder), waitMs);
    if (asked.done) return asked.value;
    this.options.logger.warn("breaker.store.slow", { operation, action: "admit", waitedMs: waitMs });
    return this.fallback(operation, entry, holder);
  }

  /**
   * Reports how a call let through by `admit` ended. The outcome is counted at once, in memory; the
   * promise settles when it is written (or the write failed, its counts kept for the next): a caller
   * with a reply to hand back need not wait for it.
   */
  record(ticket: BreakerTicket, outcome: BreakerOutcome): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    const { operation, holder } = ticket;
    const entry = this.entryOf(operation);
    const now = this.nowMs();
    extendRun(entry.runEnds, now, outcome, this.options.policy);
    if (ticket.probe) return this.write(operation, entry, { holder, outcome });
    addCall(entry.pending, now, outcome, this.options.policy);
    // An answered call that is no probe changes no status: it is written only with others, when due.
    if (outcome !== "transient") {
      if (!this.flushDue(entry, now)) return Promise.resolve();
      entry.lastFlushAt = now;
    }
    return this.write(operation, entry);
  }

  /**
   * Every operation's breaker as the store has it now, `operations` first in their order (a closed
   * breaker for each one never stored), then any other stored one.
   */
  async views(operations: readonly string[] = []): Promise<readonly BreakerView[]> {
    const stored = await this.options.store.readAll();
    const now = this.nowMs();
    const byOperation = new Map(stored.map((entry) => [entry.operation, entry.state]));
    const names = [
      ...operations,
      ...stored.map((entry) => entry.operation).filter((o) => !operations.includes(o)),
    ];
    return names.map((operation) =>
      viewOf(operation, byOperation.get(operation) ?? CLOSED_BREAKER, now, this.options.policy),
    );
  }

  /** The status this instance last saw for each operation it used (for a gauge); no store request. */
  knownStatuses(): ReadonlyMap<string, BreakerStatus> {
    const statuses = new Map<string, BreakerStatus>();
    for (const [operation, entry] of this.entries)
      statuses.set(operation, entry.known?.state.status ?? "closed");
    return statuses;
  }

  private decide(operation: string, entry: Entry, holder: string): BreakerDecision {
    const state = entry.known?.state ?? CLOSED_BREAKER;
    return this.decisionOf(operation, holder, admit(state, this.nowMs(), holder, this.options.policy));
  }

  private decisionOf(operation: string, holder: string, admission: BreakerAdmission): BreakerDecision {
    if (admission.decision === "defer") {
      const status = admission.state.status === "half-open" ? "half-open" : "open";
      return { decision: "defer", until: new Date(admission.until), status };
    }
    return {
      decision: admission.decision,
      ticket: { operation, holder, probe: admission.decision === "probe" },
    };
  }

  /** When the probe could not be claimed (the store failed, or too many writers): wait one cache period. */
  private deferBriefly(): BreakerDecision {
    return { decision: "defer", until: new Date(this.nowMs() + Math.max(this.cacheMs, 1)), status: "open" };
  }

  /** The answer from the state last known, when the store failed or was too slow: never a probe. */
  private fallback(operation: string, entry: Entry, holder: string): BreakerDecision {
    const known = this.decide(operation, entry, holder);
    return known.decision === "probe" ? this.deferBriefly() : known;
  }

  /**
   * `admit` with the store: read a stale state, and claim the probe when one is due. A probe claimed
   * after its caller stopped waiting goes unused: its lease ends it (`probeLeaseMs`).
   */
  private async admitFromStore(operation: string, entry: Entry, holder: string): Promise<BreakerDecision> {
    try {
      await this.refreshIfStale(operation, entry);
      const first = this.decide(operation, entry, holder);
      if (first.decision !== "probe") return first;
      const claimed = await this.change(operation, entry, (state, now) => {
        const admission = admit(state, now, holder, this.options.policy);
        return { next: admission.state, answer: admission };
      });
      if (claimed === undefined) return this.deferBriefly();
      return this.decisionOf(operation, holder, claimed);
    } catch (error) {
      this.storeFailed(operation, "admit", error);
      return this.fallback(operation, entry, holder);
    }
  }

  /**
   * Writes the calls this instance counted, and a probe's outcome when given. A write that does not get
   * through gives its counts back, for the next write to take (F24-10); a probe's outcome is then left to
   * its lease.
   */
  private async write(
    operation: string,
    entry: Entry,
    probe?: { readonly holder: string; readonly outcome: BreakerOutcome },
  ): Promise<void> {
    const { policy } = this.options;
    const taken = entry.pending;
    entry.pending = emptyTally();
    try {
      const done = await this.change(operation, entry, (state, at): Step<true> => {
        // A probe's outcome decides a half-open breaker (or says nothing to an open one): counts wait.
        if (probe && state.status !== "closed") {
          return { next: record(state, probe.outcome, at, probe.holder, policy), answer: true };
        }
        const run = runSince(entry.runEnds, state);
        const counts = countsOf(probe ? withCall(taken, at, probe.outcome, policy) : taken, run);
        return { next: recordCalls(state, counts, at, policy), answer: true };
      });
      if (done === undefined) mergeTally(entry.pending, taken);
    } catch (error) {
      mergeTally(entry.pending, taken);
      this.storeFailed(operation, "record", error);
    }
  }

  /**
   * Read-modify-write, one at a time in this instance: `step` answers the next state from the current
   * one (the same object: nothing to write). Tried again on a fresh read while another writer wins;
   * undefined when it never got through.
   */
  private change<T>(
    operation: string,
    entry: Entry,
    step: (state: BreakerState, now: number) => Step<T>,
  ): Promise<T | undefined> {
    const run = async (): Promise<T | undefined> => {
      for (let attempt = 0; attempt < MAX_WRITE_TRIES; attempt++) {
        // After a lost write, a read already under way may predate the winner's write: read anew.
        if (attempt > 0) await this.refresh(operation, entry, true);
        else if (this.isStale(entry)) await this.refresh(operation, entry);
        const current = entry.known ?? { state: CLOSED_BREAKER, version: undefined };
        const now = this.nowMs();
        const { next, answer } = step(current.state, now);
        if (next === current.state) return answer;
        const written = await this.options.store.write(operation, next, current.version);
        if (written.written) {
          entry.generation++;
          entry.known = { state: next, version: written.version };
          entry.knownAt = now;
          this.changed(operation, current.state, next, now);
          return answer;
        }
      }
      this.options.logger.warn("breaker.write.contended", { operation, tries: MAX_WRITE_TRIES });
      return undefined;
    };
    const result = entry.writes.then(run, run);
    entry.writes = result.catch(() => undefined);
    return result;
  }

  private changed(operation: string, previous: BreakerState, next: BreakerState, now: number): void {
    const transition = transitionOf(previous, next);
    if (transition === null) return;
    const opening = transition === "opened" && next.status === "open" ? next.opening : undefined;
    announceChange(
      { operation, transition, state: next, previous, ...(opening ? { opening } : {}), at: new Date(now) },
      viewOf(operation, next, now, this.options.policy),
      this.options.logger,
      this.options.onTransition,
    );
  }

  private isStale(entry: Entry): boolean {
    return entry.known === undefined || this.nowMs() - entry.knownAt >= this.cacheMs;
  }

  private async refreshIfStale(operation: string, entry: Entry): Promise<void> {
    if (this.isStale(entry)) await this.refresh(operation, entry);
  }

  /** Reads the stored state; concurrent callers share one read, unless `anew` asks for one of its own. */
  private async refresh(operation: string, entry: Entry, anew = false): Promise<void> {
    if (entry.reading && !anew) return entry.reading;
    if (entry.reading) await entry.reading;
    const generation = entry.generation;
    const startedAt = this.nowMs();
    entry.reading = (async () => {
      try {
        const stored = await this.options.store.read(operation);
        if (entry.generation !== generation) return;
        entry.known = stored ?? { state: CLOSED_BREAKER, version: undefined };
        entry.knownAt = startedAt;
      } finally {
        entry.reading = undefined;
      }
    })();
    return entry.reading;
  }

  /** Whether this instance's answered calls should be written now: the breaker has failures to weigh. */
  private flushDue(entry: Entry, now: number): boolean {
    const state = entry.known?.state;
    if (state?.status !== "closed" || now - entry.lastFlushAt < this.cacheMs) return false;
    if (tallyHasFailures(entry.pending) || state.consecutiveFailures > 0) return true;
    return windowTotals(state, now, this.options.policy).failures > 0;
  }

  private storeFailed(operation: string, action: string, error: unknown): void {
    this.options.logger.warn("breaker.store.failed", {
      operation,
      action,
      error: error instanceof Error ? error.message : String(error),
    });
  }

  private entryOf(operation: string): Entry {
    let entry = this.entries.get(operation);
    if (!entry) {
      entry = {
        known: undefined,
        knownAt: Number.NEGATIVE_INFINITY,
        generation: 0,
        reading: undefined,
        writes: Promise.resolve(),
        pending: emptyTally(),
        runEnds: [],
        lastFlushAt: Number.NEGATIVE_INFINITY,
      };
      this.entries.set(operation, entry);
    }
    return entry;
  }

  private nowMs(): number {
    return this.options.clock.now().getTime();
  }
}
