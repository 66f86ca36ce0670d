import {
  EFFECT_OF,
  type EffectOperation,
  PARTNER_OPERATIONS,
  type PartnerOperation,
  simulatedAnswerOf,
  type UndoOperation,
} from "../src/domain/partner-operations.js";
import { ControlBooks } from "./control-books.js";
import type { ControlChange } from "./control-contract.js";
import {
  businessIdentity,
  decodeState,
  type EffectEntry,
  encodeState,
  type KeyBinding,
  type LedgerCounter,
  type LedgerParts,
  type LedgerState,
  type LedgerTally,
  type MutableEffect,
  type StoredResult,
} from "./ledger-state.js";

export {
  type EffectEntry,
  type KeyBinding,
  LEDGER_COUNTERS,
  type LedgerCounter,
  type MutableEffect,
  type StoredResult,
} from "./ledger-state.js";

export interface OperationCounts {
  /** Well-formed calls, whatever their answer. */
  readonly calls: number;
  /** Effects applied (for an undo operation: effects actually undone). */
  readonly effects: number;
}

/** A snapshot of everything the partner saw and did; later calls do not change it. */
export interface PartnerLedger {
  /** Well-formed calls (a known operation, a valid key and body), whatever their answer. */
  readonly calls: number;
  /** Requests answered 400/404/405/413. */
  readonly badRequests: number;
  /** Effect operations applied (reserve, charge, ship), undone or not. */
  readonly effects: number;
  /** Effects reversed by an undo call. */
  readonly undos: number;
  /**
   * Effects applied for an (effect operation, orderId) pair that already had an effect not undone.
   * Counted from the business identity, not the key: an Agent that changes its key between retries
   * shows up here even though each key was applied only once.
   */
  readonly duplicateEffects: number;
  /** Calls answered 422, the sticky repeats included. */
  readonly rejections: number;
  /** Calls answered 409 (a key reused for another operation, order or reference). */
  readonly conflicts: number;
  /** Calls answered 503 or 429 by an injected transient fault. */
  readonly transientFaults: number;
  /** Calls applied (or replayed) whose answer was delayed by `slowMs`. */
  readonly slowReplies: number;
  /** Calls applied (or replayed) whose connection was dropped instead of answered. */
  readonly lostReplies: number;
  /** Calls refused with 503 because the partner was in an outage (counted in `calls` too). */
  readonly outageRefusals: number;
  /**
   * Requests refused 401 or 403 for a missing or wrong access key since the process started: counted in
   * memory only, never journaled, so a stranger cannot write to the books (F24-5).
   */
  readonly unauthorized: number;
  readonly byOperation: Readonly<Record<PartnerOperation, OperationCounts>>;
  /** Every effect applied, in order. */
  readonly effectLog: readonly EffectEntry[];
  readonly effectsByOrder: Readonly<Record<string, readonly EffectEntry[]>>;
  /** Well-formed calls made with `key`. */
  callsForKey(key: string): number;
  /** Well-formed calls made for `orderId`, across all its keys. */
  callsForOrder(orderId: string): number;
  /** Effects applied with `key`: at most 1 while the partner keeps its at-most-once promise. */
  effectsForKey(key: string): number;
  /** Keys of `orderId` the partner refused for good (each counted once, not its sticky repeats). */
  refusalsForOrder(orderId: string): number;
}

/** The ledger as plain data: what `Ledger.data()` copies out and `ledgerView` reads. */
export interface LedgerData {
  readonly totals: Omit<
    PartnerLedger,
    | "byOperation"
    | "effectLog"
    | "effectsByOrder"
    | "callsForKey"
    | "callsForOrder"
    | "effectsForKey"
    | "refusalsForOrder"
  >;
  readonly byOperation: Readonly<Record<PartnerOperation, OperationCounts>>;
  readonly effectLog: readonly EffectEntry[];
  readonly keyCalls: ReadonlyMap<string, number>;
  readonly orderCalls: ReadonlyMap<string, number>;
  readonly orderRefusals: ReadonlyMap<string, number>;
}

/** The ledger's questions answered from a copy of its data. */
export function ledgerView(data: LedgerData): PartnerLedger {
  const effectsByOrder: Record<string, EffectEntry[]> = Object.create(null);
  const effectsByKey = new Map<string, number>();
  for (const effect of data.effectLog) {
    const entries = effectsByOrder[effect.orderId] ?? [];
    entries.push(effect);
    effectsByOrder[effect.orderId] = entries;
    effectsByKey.set(effect.idempotencyKey, (effectsByKey.get(effect.idempotencyKey) ?? 0) + 1);
  }
  return {
    ...data.totals,
    byOperation: data.byOperation,
    effectLog: data.effectLog,
    effectsByOrder,
    callsForKey: (key) => data.keyCalls.get(key) ?? 0,
    callsForOrder: (orderId) => data.orderCalls.get(orderId) ?? 0,
    effectsForKey: (key) => effectsByKey.get(key) ?? 0,
    refusalsForOrder: (orderId) => data.orderRefusals.get(orderId) ?? 0,
  };
}

/**
 * A counter journals written before F24-5 may hold: refused callers were counted in the books then. Read
 * and skipped; they are counted in memory only now (`countRefusedCaller`).
 */
export const RETIRED_COUNTERS = ["unauthorized"] as const;
export type RetiredCounter = (typeof RETIRED_COUNTERS)[number];

/** One change to the books, as the journal keeps it: replaying every event rebuilds the same books. */
export type LedgerEvent =
  | {
      readonly kind: "call";
      readonly operation: PartnerOperation;
      readonly key: string;
      readonly orderId: string;
    }
  | { readonly kind: "count"; readonly counter: LedgerCounter | RetiredCounter }
  | {
      readonly kind: "reject";
      readonly key: string;
      readonly operation: PartnerOperation;
      readonly orderId: string;
      readonly target: string | null;
      readonly reason: string;
    }
  | {
      readonly kind: "effect";
      readonly key: string;
      readonly operation: EffectOperation;
      readonly orderId: string;
      readonly at: string;
    }
  | {
      readonly kind: "undo";
      readonly key: string;
      readonly operation: UndoOperation;
      readonly orderId: string;
      readonly effectReference: string;
    }
  | { readonly kind: "control"; readonly change: ControlChange };

/**
 * Where the books are kept durably. `append` runs before the change is made; the partner answers only
 * once the event is durable, so an effect it reported applied is never forgotten by a partner that
 * restarts. A synchronous journal (a SQLite file) has it durable when `append` returns; an asynchronous
 * one (an append blob) buffers it and has `durable` resolve once every event appended so far is written.
 */
export interface LedgerJournal {
  append(event: LedgerEvent): void;
  clear(): void;
  /** Resolves once every event appended so far is durable; rejects if writing them failed. */
  durable?(): Promise<void>;
  /**
   * Why the journal takes no more events (another writer took it, say), or undefined while it does. Once
   * set, the books in memory may hold changes that will never be durable: nothing may be answered from them.
   */
  failure?(): Error | undefined;
}

/**
 * The partner's books: idempotency records, applied effects, counters and control changes. Changed
 * synchronously, so a call's decisions never interleave with another's; only durability may be awaited.
 */
export class Ledger {
  /** Rebuilds the books from a journal's events; later changes are appended to `journal`. */
  static replay(events: Iterable<LedgerEvent>, journal?: LedgerJournal): Ledger {
    return Ledger.restore(undefined, events, journal);
  }

  /**
   * Rebuilds the books from a snapshot (`state()`, or none) and the events journaled after it; later
   * changes are appended to `journal`.
   */
  static restore(
    state: LedgerState | undefined,
    events: Iterable<LedgerEvent>,
    journal?: LedgerJournal,
  ): Ledger {
    const ledger = new Ledger();
    if (state) decodeState(state, ledger.parts());
    for (const event of events) ledger.apply(event);
    ledger.journal = journal;
    return ledger;
  }

  constructor(private journal?: LedgerJournal) {}

  private readonly bindings = new Map<string, KeyBinding>();
  private readonly effectsByReference = new Map<string, MutableEffect>();
  private readonly effectLog: MutableEffect[] = [];
  /** Effects not undone, per (effect operation, orderId): the business identity of an effect. */
  private readonly liveEffects = new Map<string, number>();
  private readonly keyCalls = new Map<string, number>();
  private readonly orderCalls = new Map<string, number>();
  private readonly orderRefusals = new Map<string, number>();
  private readonly nextReference = new Map<PartnerOperation, number>();
  private readonly operationCounts = new Map<PartnerOperation, { calls: number; effects: number }>();
  private readonly counters = new Map<LedgerCounter, number>();
  private readonly tally: LedgerTally = { calls: 0, undos: 0, duplicateEffects: 0 };
  /** Requests refused for a missing or wrong access key: in memory only, never journaled (F24-5). */
  private refusedCallers = 0;
  /** The control changes: the fault rates and outages an operator (or the settings) set. */
  readonly control = new ControlBooks();

  /** Records a well-formed call and returns its 1-based number among the calls with `key`. */
  countCall(operation: PartnerOperation, key: string, orderId: string): number {
    this.journal?.append({ kind: "call", operation, key, orderId });
    this.tally.calls++;
    this.countsOf(operation).calls++;
    this.orderCalls.set(orderId, (this.orderCalls.get(orderId) ?? 0) + 1);
    const n = (this.keyCalls.get(key) ?? 0) + 1;
    this.keyCalls.set(key, n);
    return n;
  }

  count(counter: LedgerCounter): void {
    this.journal?.append({ kind: "count", counter });
    this.counters.set(counter, (this.counters.get(counter) ?? 0) + 1);
  }

  /**
   * Counts a request refused for its access key. Not journaled: a stranger must not write to the books,
   * nor make its refusal wait on them. Starts again from 0 when the process does.
   */
  countRefusedCaller(): void {
    this.refusedCallers++;
  }

  recordControl(change: ControlChange): void {
    this.journal?.append({ kind: "control", change });
    this.control.apply(change);
  }

  /**
   * Resolves once every change made so far is durable; undefined when the journal (if any) is
   * synchronous, so the caller need not wait a turn.
   */
  durable(): Promise<void> | undefined {
    return this.journal?.durable?.();
  }

  /** Why the journal takes no more changes, or undefined while it does (see `LedgerJournal.failure`). */
  journalFailure(): Error | undefined {
    return this.journal?.failure?.();
  }

  bindingOf(key: string): KeyBinding | undefined {
    return this.bindings.get(key);
  }

  reject(key: string, operation: PartnerOperation, orderId: string, target: string | null, reason: string) {
    this.journal?.append({ kind: "reject", key, operation, orderId, target, reason });
    this.orderRefusals.set(orderId, (this.orderRefusals.get(orderId) ?? 0) + 1);
    const result: StoredResult = { kind: "rejected", operation, orderId, reason };
    this.bindings.set(key, { operation, orderId, target, result });
    return result;
  }

  applyEffect(key: string, operation: EffectOperation, orderId: string, at: Date): StoredResult {
    this.journal?.append({ kind: "effect", key, operation, orderId, at: at.toISOString() });
    const identity = businessIdentity(operation, orderId);
    const live = this.liveEffects.get(identity) ?? 0;
    if (live > 0) this.tally.duplicateEffects++;
    this.liveEffects.set(identity, live + 1);
    const reference = this.issueReference(operation);
    const effect: MutableEffect = {
      operation,
      orderId,
      idempotencyKey: key,
      reference,
      appliedAt: at.toISOString(),
      undone: false,
      undoneBy: null,
    };
    this.effectLog.push(effect);
    this.effectsByReference.set(reference, effect);
    this.countsOf(operation).effects++;
    const result: StoredResult = { kind: "effect", operation, orderId, reference };
    this.bindings.set(key, { operation, orderId, target: null, result });
    return result;
  }

  /**
   * Undoes the effect `effectReference` names if this partner issued it, for this order, by the
   * matching effect operation, and it is not undone yet; otherwise there is nothing to undo.
   */
  applyUndo(key: string, operation: UndoOperation, orderId: string, effectReference: string): StoredResult {
    this.journal?.append({ kind: "undo", key, operation, orderId, effectReference });
    const effect = this.effectsByReference.get(effectReference);
    const undoable =
      effect !== undefined &&
      !effect.undone &&
      effect.orderId === orderId &&
      effect.operation === EFFECT_OF[operation];
    let reference: string | null = null;
    if (undoable) {
      reference = this.issueReference(operation);
      effect.undone = true;
      const identity = businessIdentity(effect.operation, orderId);
      this.liveEffects.set(identity, (this.liveEffects.get(identity) ?? 1) - 1);
      effect.undoneBy = reference;
      this.tally.undos++;
      this.countsOf(operation).effects++;
    }
    const result: StoredResult = {
      kind: "undo",
      operation,
      orderId,
      reference,
      undone: undoable,
      effectReference,
    };
    this.bindings.set(key, { operation, orderId, target: effectReference, result });
    return result;
  }

  snapshot(): PartnerLedger {
    return ledgerView(this.data());
  }

  /** A copy of the books as plain data (no functions), which can cross to another thread. */
  data(): LedgerData {
    const counter = (name: LedgerCounter) => this.counters.get(name) ?? 0;
    return {
      totals: {
        calls: this.tally.calls,
        badRequests: counter("badRequests"),
        effects: this.effectLog.length,
        undos: this.tally.undos,
        duplicateEffects: this.tally.duplicateEffects,
        rejections: counter("rejections"),
        conflicts: counter("conflicts"),
        transientFaults: counter("transientFaults"),
        slowReplies: counter("slowReplies"),
        lostReplies: counter("lostReplies"),
        outageRefusals: counter("outageRefusals"),
        unauthorized: this.refusedCallers,
      },
      byOperation: Object.fromEntries(
        PARTNER_OPERATIONS.map((op) => [op, { ...this.countsOf(op) }]),
      ) as Record<PartnerOperation, OperationCounts>,
      effectLog: this.effectLog.map((e): EffectEntry => ({ ...e })),
      keyCalls: new Map(this.keyCalls),
      orderCalls: new Map(this.orderCalls),
      orderRefusals: new Map(this.orderRefusals),
    };
  }

  reset(): void {
    this.journal?.clear();
    this.bindings.clear();
    this.effectsByReference.clear();
    this.effectLog.length = 0;
    this.liveEffects.clear();
    this.keyCalls.clear();
    this.orderCalls.clear();
    this.orderRefusals.clear();
    this.nextReference.clear();
    this.operationCounts.clear();
    this.counters.clear();
    this.control.reset();
    this.tally.calls = 0;
    this.tally.undos = 0;
    this.tally.duplicateEffects = 0;
    this.refusedCallers = 0;
  }

  /** The books as one plain value, for a snapshot; the refused callers, not in the books, are left out. */
  state(): LedgerState {
    return encodeState(this.parts());
  }

  private parts(): LedgerParts {
    return {
      bindings: this.bindings,
      effectsByReference: this.effectsByReference,
      effectLog: this.effectLog,
      liveEffects: this.liveEffects,
      keyCalls: this.keyCalls,
      orderCalls: this.orderCalls,
      orderRefusals: this.orderRefusals,
      nextReference: this.nextReference,
      operationCounts: this.operationCounts,
      counters: this.counters,
      tally: this.tally,
      control: this.control,
    };
  }

  private apply(event: LedgerEvent): void {
    switch (event.kind) {
      case "call":
        this.countCall(event.operation, event.key, event.orderId);
        return;
      case "count":
        if (event.counter !== "unauthorized") this.count(event.counter);
        return;
      case "reject":
        this.reject(event.key, event.operation, event.orderId, event.target, event.reason);
        return;
      case "effect":
        this.applyEffect(event.key, event.operation, event.orderId, new Date(event.at));
        return;
      case "undo":
        this.applyUndo(event.key, event.operation, event.orderId, event.effectReference);
        return;
      case "control":
        this.recordControl(event.change);
        return;
    }
  }

  private countsOf(operation: PartnerOperation): { calls: number; effects: number } {
    let counts = this.operationCounts.get(operation);
    if (!counts) {
      counts = { calls: 0, effects: 0 };
      this.operationCounts.set(operation, counts);
    }
    return counts;
  }

  private issueReference(operation: PartnerOperation): string {
    const n = (this.nextReference.get(operation) ?? 0) + 1;
    this.nextReference.set(operation, n);
    return `${simulatedAnswerOf(operation).prefix}-${String(n).padStart(6, "0")}`;
  }
}
