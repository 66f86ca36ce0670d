/**
 * The partner's books as one plain value: what a snapshot of the append-blob journal holds
 * (ledger-snapshot.ts), so that a start reads it instead of replaying every event ever journaled.
 * Restoring a state and replaying the events journaled after it gives the same books as replaying every
 * event (test/partner/ledger-state.test.ts).
 */

import type { EffectOperation, PartnerOperation, UndoOperation } from "../src/domain/partner-operations.js";
import type { ControlBooks, ControlBooksState } from "./control-books.js";

/** One effect the partner applied. `undone` turns true when an undo call reverses it. */
export interface EffectEntry {
  readonly operation: EffectOperation;
  readonly orderId: string;
  readonly idempotencyKey: string;
  readonly reference: string;
  readonly appliedAt: string;
  readonly undone: boolean;
  /** Reference of the undo that reversed this effect, or null. */
  readonly undoneBy: string | null;
}

/** The counters kept in the books (journaled). */
export const LEDGER_COUNTERS = [
  "badRequests",
  "rejections",
  "conflicts",
  "transientFaults",
  "slowReplies",
  "lostReplies",
  "outageRefusals",
] as const;
export type LedgerCounter = (typeof LEDGER_COUNTERS)[number];

/** The answer stored for a key: replayed verbatim (with `replayed: true`) to every later call. */
export type StoredResult =
  | {
      readonly kind: "effect";
      readonly operation: EffectOperation;
      readonly orderId: string;
      readonly reference: string;
    }
  | {
      readonly kind: "undo";
      readonly operation: UndoOperation;
      readonly orderId: string;
      /** Reference of this undo, or null when there was nothing to undo. */
      readonly reference: string | null;
      readonly undone: boolean;
      /** The reference the caller asked to undo. */
      readonly effectReference: string;
    }
  | {
      readonly kind: "rejected";
      readonly operation: PartnerOperation;
      readonly orderId: string;
      readonly reason: string;
    };

/** What a key is bound to by its first successful or rejected call. */
export interface KeyBinding {
  readonly operation: PartnerOperation;
  readonly orderId: string;
  /** For undo operations, the reference to undo; null for effects. */
  readonly target: string | null;
  readonly result: StoredResult;
}

export type MutableEffect = { -readonly [K in keyof EffectEntry]: EffectEntry[K] };

/** Bumped when the shape changes; a snapshot of another version is not read (the journal is). */
export const LEDGER_STATE_VERSION = 1;

/** The effects applied, in order; an effect's undo reference is null while it is not undone. */
export interface EffectColumns {
  readonly operation: readonly EffectOperation[];
  readonly orderId: readonly string[];
  readonly key: readonly string[];
  readonly reference: readonly string[];
  readonly appliedAt: readonly string[];
  readonly undoneBy: readonly (string | null)[];
}

/** Keys bound to an undo: its reference is null when there was nothing to undo. */
export interface UndoBindingColumns {
  readonly key: readonly string[];
  readonly operation: readonly UndoOperation[];
  readonly orderId: readonly string[];
  readonly effectReference: readonly string[];
  readonly reference: readonly (string | null)[];
}

/** Keys bound to a refusal. */
export interface RefusalBindingColumns {
  readonly key: readonly string[];
  readonly operation: readonly PartnerOperation[];
  readonly orderId: readonly string[];
  readonly target: readonly (string | null)[];
  readonly reason: readonly string[];
}

/** A count per name, in the order the names were first counted. */
export interface CountColumns<K extends string = string> {
  readonly name: readonly K[];
  readonly count: readonly number[];
}

/**
 * The books. Tables are columns (an array per field) rather than rows: a snapshot holds every key and
 * effect, and one object or array per row would multiply what a start parses and allocates.
 */
export interface LedgerState {
  readonly version: typeof LEDGER_STATE_VERSION;
  readonly calls: number;
  readonly undos: number;
  readonly duplicateEffects: number;
  readonly effects: EffectColumns;
  /** Keys bound to an effect, by the effect's index: applying an effect binds the key it was applied with. */
  readonly effectBindings: readonly number[];
  readonly undoBindings: UndoBindingColumns;
  readonly refusalBindings: RefusalBindingColumns;
  readonly keyCalls: CountColumns;
  readonly orderCalls: CountColumns;
  readonly orderRefusals: CountColumns;
  readonly nextReference: CountColumns<PartnerOperation>;
  readonly operationCounts: {
    readonly operation: readonly PartnerOperation[];
    readonly calls: readonly number[];
    readonly effects: readonly number[];
  };
  readonly counters: CountColumns<LedgerCounter>;
  readonly control: ControlBooksState;
}

export interface LedgerTally {
  calls: number;
  undos: number;
  duplicateEffects: number;
}

/** The Ledger's own maps and counts, lent to encode and decode them. */
export interface LedgerParts {
  readonly bindings: Map<string, KeyBinding>;
  readonly effectsByReference: Map<string, MutableEffect>;
  readonly effectLog: MutableEffect[];
  readonly liveEffects: Map<string, number>;
  readonly keyCalls: Map<string, number>;
  readonly orderCalls: Map<string, number>;
  readonly orderRefusals: Map<string, number>;
  readonly nextReference: Map<PartnerOperation, number>;
  readonly operationCounts: Map<PartnerOperation, { calls: number; effects: number }>;
  readonly counters: Map<LedgerCounter, number>;
  readonly tally: LedgerTally;
  readonly control: ControlBooks;
}

/** The business identity of an effect: an (effect operation, order) pair. */
export function businessIdentity(operation: EffectOperation, orderId: string): string {
  return `${operation}\u0000${orderId}`;
}

export function encodeState(parts: LedgerParts): LedgerState {
  const log = parts.effectLog;
  const indexOf = new Map<string, number>();
  for (const [index, effect] of log.entries()) indexOf.set(effect.reference, index);
  const effectBindings: number[] = [];
  const undos: { key: string; result: Extract<StoredResult, { kind: "undo" }> }[] = [];
  const refusals: {
    key: string;
    target: string | null;
    result: Extract<StoredResult, { kind: "rejected" }>;
  }[] = [];
  for (const [key, { target, result }] of parts.bindings) {
    if (result.kind === "undo") undos.push({ key, result });
    else if (result.kind === "rejected") refusals.push({ key, target, result });
    else {
      const index = indexOf.get(result.reference);
      if (index === undefined)
        throw new Error(`key ${key} is bound to ${result.reference}, an effect not in the books`);
      effectBindings.push(index);
    }
  }
  return {
    version: LEDGER_STATE_VERSION,
    ...parts.tally,
    effects: {
      operation: log.map((e) => e.operation),
      orderId: log.map((e) => e.orderId),
      key: log.map((e) => e.idempotencyKey),
      reference: log.map((e) => e.reference),
      appliedAt: log.map((e) => e.appliedAt),
      undoneBy: log.map((e) => e.undoneBy),
    },
    effectBindings,
    undoBindings: {
      key: undos.map((u) => u.key),
      operation: undos.map((u) => u.result.operation),
      orderId: undos.map((u) => u.result.orderId),
      effectReference: undos.map((u) => u.result.effectReference),
      reference: undos.map((u) => u.result.reference),
    },
    refusalBindings: {
      key: refusals.map((r) => r.key),
      operation: refusals.map((r) => r.result.operation),
      orderId: refusals.map((r) => r.result.orderId),
      target: refusals.map((r) => r.target),
      reason: refusals.map((r) => r.result.reason),
    },
    keyCalls: countColumns(parts.keyCalls),
    orderCalls: countColumns(parts.orderCalls),
    orderRefusals: countColumns(parts.orderRefusals),
    nextReference: countColumns(parts.nextReference),
    operationCounts: {
      operation: Array.from(parts.operationCounts.keys()),
      calls: Array.from(parts.operationCounts.values(), (counts) => counts.calls),
      effects: Array.from(parts.operationCounts.values(), (counts) => counts.effects),
    },
    counters: countColumns(parts.counters),
    control: parts.control.state(),
  };
}

function countColumns<K extends string>(counts: ReadonlyMap<K, number>): CountColumns<K> {
  return { name: Array.from(counts.keys()), count: Array.from(counts.values()) };
}

/** Fills `parts`, which must be empty, with `state` (checked: ledger-schema.ts). */
export function decodeState(state: LedgerState, parts: LedgerParts): void {
  const { effects } = state;
  for (let i = 0; i < effects.reference.length; i++) {
    const effect = effectAt(effects, i);
    parts.effectLog.push(effect);
    parts.effectsByReference.set(effect.reference, effect);
    if (!effect.undone) {
      const identity = businessIdentity(effect.operation, effect.orderId);
      parts.liveEffects.set(identity, (parts.liveEffects.get(identity) ?? 0) + 1);
    }
  }
  for (const index of state.effectBindings) {
    const { operation, orderId, idempotencyKey, reference } = cell(parts.effectLog, index);
    parts.bindings.set(idempotencyKey, {
      operation,
      orderId,
      target: null,
      result: { kind: "effect", operation, orderId, reference },
    });
  }
  const undo = state.undoBindings;
  for (let i = 0; i < undo.key.length; i++) {
    const operation = cell(undo.operation, i);
    const orderId = cell(undo.orderId, i);
    const effectReference = cell(undo.effectReference, i);
    const reference = cell(undo.reference, i);
    parts.bindings.set(cell(undo.key, i), {
      operation,
      orderId,
      target: effectReference,
      result: { kind: "undo", operation, orderId, reference, undone: reference !== null, effectReference },
    });
  }
  const refusal = state.refusalBindings;
  for (let i = 0; i < refusal.key.length; i++) {
    const operation = cell(refusal.operation, i);
    const orderId = cell(refusal.orderId, i);
    const result = { kind: "rejected", operation, orderId, reason: cell(refusal.reason, i) } as const;
    parts.bindings.set(cell(refusal.key, i), { operation, orderId, target: cell(refusal.target, i), result });
  }
  fillCounts(parts.keyCalls, state.keyCalls);
  fillCounts(parts.orderCalls, state.orderCalls);
  fillCounts(parts.orderRefusals, state.orderRefusals);
  fillCounts(parts.nextReference, state.nextReference);
  fillCounts(parts.counters, state.counters);
  const { operationCounts } = state;
  operationCounts.operation.forEach((operation, i) => {
    parts.operationCounts.set(operation, {
      calls: cell(operationCounts.calls, i),
      effects: cell(operationCounts.effects, i),
    });
  });
  parts.tally.calls = state.calls;
  parts.tally.undos = state.undos;
  parts.tally.duplicateEffects = state.duplicateEffects;
  parts.control.load(state.control);
}

function effectAt(effects: EffectColumns, i: number): MutableEffect {
  const undoneBy = cell(effects.undoneBy, i);
  return {
    operation: cell(effects.operation, i),
    orderId: cell(effects.orderId, i),
    idempotencyKey: cell(effects.key, i),
    reference: cell(effects.reference, i),
    appliedAt: cell(effects.appliedAt, i),
    undone: undoneBy !== null,
    undoneBy,
  };
}

/** Row `i` of a column; the schema checks a table's columns are as long as each other. */
function cell<T>(column: readonly T[], i: number): T {
  const value = column[i];
  if (value === undefined) throw new RangeError(`a snapshot column has no row ${i}`);
  return value;
}

function fillCounts<K extends string>(into: Map<K, number>, counts: CountColumns<K>): void {
  for (const [i, name] of counts.name.entries()) into.set(name, cell(counts.count, i));
}
