import { randomUUID } from "node:crypto";
import {
  admit,
  type BreakerAdmission,
  type BreakerOpening,
  type BreakerOutcome,
  type BreakerPolicy,
  type BreakerState,
  type BreakerStatus,
  type BreakerTransition,
  type BreakerView,
  bucketStart,
  CLOSED_BREAKER,
  openingOf,
  record,
  recordAnswered,
  transitionOf,
  viewOf,
  windowTotals,
} from "../domain/circuit-breaker.js";
import type { BreakerStore } from "../ports/breaker-store.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";

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
}

export interface BreakerChange {
  readonly operation: string;
  readonly transition: BreakerTransition;
  readonly state: BreakerState;
  /** The state it changed from (a half-open one keeps when it opened). */
  readonly previous: BreakerState;
  /** For `opened`: which threshold the failure that opened it reached, and the counts. */
  readonly opening?: BreakerOpening;
  readonly at: Date;
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

/** Answered calls (successes, refusals) not yet written: per bucket start, and when the last ended. */
interface Tally {
  readonly buckets: Map<number, number>;
  lastAt: number;
}

interface Entry {
  /** The state last read or written, and its version (undefined: none stored). */
  known: { readonly state: BreakerState; readonly version: string | undefined } | undefined;
  knownAt: number;
  /** Bumped by every write, so a read that started before one does not replace what it wrote. */
  generation: number;
  reading: Promise<void> | undefined;
  /** This instance's writes, one at a time, so they do not lose to each other. */
  writes: Promise<unknown>;
  pending: Tally;
  lastFlushAt: number;
}

/**
 * The circuit breaker of every partner operation, shared through a `BreakerStore` by every Agent
 * instance. It reads a state again only once it is `cacheMs` old, so a closed breaker costs no store
 * request per call; it writes on failures, on probe admissions and outcomes (transitions), and, while a
 * closed breaker has failures to weigh them against, the successes of the last `cacheMs` at most once
 * per `cacheMs`. Each write is conditional on the version read, and is read and made again when another
 * instance wrote first.
 *
 * A store that fails does not stop calls: the breaker answers from what it knew and logs the failure.
 */
export class SharedBreaker {
  private readonly entries = new Map<string, Entry>();
  private readonly enabled: boolean;
  private readonly cacheMs: number;
  private readonly newHolder: () => string;

  constructor(private readonly options: SharedBreakerOptions) {
    this.enabled = options.enabled ?? true;
    this.cacheMs = options.cacheMs ?? DEFAULT_CACHE_MS;
    this.newHolder = options.newHolder ?? randomUUID;
    if (!Number.isFinite(this.cacheMs) || this.cacheMs < 0) {
      throw new RangeError(`cacheMs must be a number of at least 0; got ${this.cacheMs}`);
    }
  }

  /** Whether `operation` may be called now: call, call as the probe, or make no call before `until`. */
  async admit(operation: string): Promise<BreakerDecision> {
    const holder = this.newHolder();
    if (!this.enabled) return { decision: "call", ticket: { operation, holder, probe: false } };
    const entry = this.entryOf(operation);
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
      const fallback = this.decide(operation, entry, holder);
      return fallback.decision === "probe" ? this.deferBriefly() : fallback;
    }
  }

  /** Reports how a call let through by `admit` ended. */
  async record(ticket: BreakerTicket, outcome: BreakerOutcome): Promise<void> {
    if (!this.enabled) return;
    const { operation, holder } = ticket;
    const entry = this.entryOf(operation);
    const { policy } = this.options;
    const now = this.nowMs();
    // An answered call that is no probe changes no status: it is written only with others, when due.
    const answeredOnly = !ticket.probe && outcome !== "transient";
    if (answeredOnly) {
      addAnswered(entry.pending, now, policy);
      if (!this.flushDue(entry, now)) return;
      entry.lastFlushAt = now;
    }
    const taken = entry.pending;
    entry.pending = emptyTally();
    try {
      const done = await this.change(operation, entry, (state, at) => {
        const merged = taken.buckets.size > 0 ? recordAnswered(state, answeredOf(taken), at, policy) : state;
        const next = answeredOnly ? merged : record(merged, outcome, at, holder, policy);
        return { next, answer: true, from: merged };
      });
      if (done === undefined) mergeTally(entry.pending, taken);
    } catch (error) {
      mergeTally(entry.pending, taken);
      this.storeFailed(operation, "record", error);
    }
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

  /**
   * Read-modify-write, one at a time in this instance: `step` answers the next state from the current
   * one (the same object: nothing to write), and optionally the state the change was judged from, when
   * it merged something first. Tried again on a fresh read while another writer wins; undefined when it
   * never got through.
   */
  private change<T>(
    operation: string,
    entry: Entry,
    step: (
      state: BreakerState,
      now: number,
    ) => { readonly next: BreakerState; readonly answer: T; readonly from?: BreakerState },
  ): Promise<T | undefined> {
    const run = async (): Promise<T | undefined> => {
      for (let attempt = 0; attempt < MAX_WRITE_TRIES; attempt++) {
        // After a lost write, a read already under way may predate the winner's write: read anew.
        if (attempt > 0) await this.refresh(operation, entry, true);
        else if (this.isStale(entry)) await this.refresh(operation, entry);
        const current = entry.known ?? { state: CLOSED_BREAKER, version: undefined };
        const now = this.nowMs();
        const { next, answer, from } = step(current.state, now);
        if (next === current.state) return answer;
        const written = await this.options.store.write(operation, next, current.version);
        if (written.written) {
          entry.generation++;
          entry.known = { state: next, version: written.version };
          entry.knownAt = now;
          this.changed(operation, from ?? current.state, next, now);
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
    const view = viewOf(operation, next, now, this.options.policy);
    const opening = transition === "opened" ? openingOf(previous, now, this.options.policy) : undefined;
    const fields = {
      operation,
      status: view.status,
      openedAt: view.openedAt,
      nextProbeAt: view.nextProbeAt,
      ...(opening ? { cause: opening.cause } : {}),
    };
    const logger = this.options.logger;
    if (transition === "opened" || transition === "reopened") logger.warn(`breaker.${transition}`, fields);
    else logger.info(`breaker.${transition}`, fields);
    try {
      this.options.onTransition?.({
        operation,
        transition,
        state: next,
        previous,
        ...(opening ? { opening } : {}),
        at: new Date(now),
      });
    } catch (error) {
      // The change is written; a listener that fails must not make it look as if it was not.
      logger.error("breaker.listener.failed", { operation, transition, error });
    }
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
    return state.consecutiveFailures > 0 || windowTotals(state, now, this.options.policy).failures > 0;
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

function emptyTally(): Tally {
  return { buckets: new Map(), lastAt: Number.NEGATIVE_INFINITY };
}

/** Counts one answered call at `at`, forgetting buckets that have left the window. */
function addAnswered(tally: Tally, at: number, policy: BreakerPolicy): void {
  const start = bucketStart(at, policy);
  for (const old of tally.buckets.keys()) if (old < start - policy.windowMs) tally.buckets.delete(old);
  tally.buckets.set(start, (tally.buckets.get(start) ?? 0) + 1);
  tally.lastAt = Math.max(tally.lastAt, at);
}

function mergeTally(into: Tally, from: Tally): void {
  for (const [start, calls] of from.buckets) into.buckets.set(start, (into.buckets.get(start) ?? 0) + calls);
  into.lastAt = Math.max(into.lastAt, from.lastAt);
}

function answeredOf(tally: Tally): { buckets: { start: number; calls: number }[]; lastAt: number } {
  return { buckets: [...tally.buckets].map(([start, calls]) => ({ start, calls })), lastAt: tally.lastAt };
}
