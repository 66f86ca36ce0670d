import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ControlChange } from "../../partner/control-contract.js";
import { LEDGER_COUNTERS, Ledger, type LedgerEvent, type LedgerJournal } from "../../partner/ledger.js";
import { parseState } from "../../partner/ledger-schema.js";
import {
  EFFECT_OPERATIONS,
  PARTNER_OPERATIONS,
  UNDO_OF,
  UNDO_OPERATIONS,
} from "../../src/domain/partner-operations.js";
import { ValidationError } from "../../src/domain/validation.js";

/** A journal that keeps what it is given. */
function recording(): { journal: LedgerJournal; events: LedgerEvent[] } {
  const events: LedgerEvent[] = [];
  return { events, journal: { append: (event) => void events.push(event), clear: () => {} } };
}

const key = fc.constantFrom("k-1", "k-2", "k-3", "k-4", "k-5", "k-6");
const order = fc.constantFrom("o-1", "o-2", "o-3");
const at = fc.integer({ min: 0, max: 1_000_000 }).map((ms) => new Date(Date.UTC(2026, 0, 1) + ms * 1000));
const rates = fc.record({
  transient: fc.constantFrom(0, 0.1),
  permanent: fc.constantFrom(0, 0.01),
  slow: fc.constantFrom(0, 0.2),
  lostReply: fc.constantFrom(0, 0.05),
});
const change: fc.Arbitrary<ControlChange> = fc.oneof(
  fc.record({ at: at.map(String), rates }).map(({ at, rates }) => ({
    at,
    change: "faults" as const,
    by: "operator" as const,
    faults: rates,
  })),
  fc.tuple(at, fc.integer({ min: 1, max: 3_600 })).map(([from, seconds]) => ({
    at: from.toISOString(),
    change: "outage" as const,
    by: "operator" as const,
    until: new Date(from.getTime() + seconds * 1000).toISOString(),
  })),
  at.map((when) => ({ at: when.toISOString(), change: "recovered" as const, by: "operator" as const })),
);

type Step = (ledger: Ledger) => void;
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.tuple(fc.constantFrom(...PARTNER_OPERATIONS), key, order).map(
    ([op, k, o]): Step =>
      (ledger) =>
        void ledger.countCall(op, k, o),
  ),
  fc.tuple(fc.constantFrom(...EFFECT_OPERATIONS), key, order, at).map(
    ([op, k, o, when]): Step =>
      (ledger) =>
        void ledger.applyEffect(k, op, o, when),
  ),
  fc
    .tuple(
      fc.constantFrom(...UNDO_OPERATIONS),
      key,
      order,
      fc.nat(8),
      fc.constantFrom("its own", "any", "none"),
    )
    .map(
      ([op, k, o, n, target]): Step =>
        (ledger) => {
          // The undo of an effect this partner issued, for its order; one that does not match it; or a
          // reference it never issued.
          const effect = ledger.snapshot().effectLog[n];
          if (effect && target === "its own")
            ledger.applyUndo(k, UNDO_OF[effect.operation], effect.orderId, effect.reference);
          else ledger.applyUndo(k, op, o, effect && target === "any" ? effect.reference : `nope-${n}`);
        },
    ),
  fc.tuple(fc.constantFrom(...PARTNER_OPERATIONS), key, order, fc.option(fc.constant("res-000001"))).map(
    ([op, k, o, target]): Step =>
      (ledger) =>
        void ledger.reject(k, op, o, target, "refused"),
  ),
  fc.constantFrom(...LEDGER_COUNTERS).map(
    (counter): Step =>
      (ledger) =>
        ledger.count(counter),
  ),
  change.map(
    (c): Step =>
      (ledger) =>
        ledger.recordControl(c),
  ),
);

/** What the books answer: their data, their state, every key's binding, and what the next changes give. */
function answers(ledger: Ledger) {
  const keys = ["k-1", "k-2", "k-3", "k-4", "k-5", "k-6"];
  const bindings = keys.map((k) => ledger.bindingOf(k));
  const data = ledger.data();
  const control = { changes: ledger.control.changes(), faults: ledger.control.lastFaults() };
  // Further changes exercise what the state does not show directly: references issued next, and which
  // effects are live (a duplicate counts only against one not undone).
  const next = EFFECT_OPERATIONS.flatMap((op) =>
    ["o-1", "o-2", "o-3"].map((o) => ledger.applyEffect(`next-${op}-${o}`, op, o, new Date(0))),
  );
  return { data, bindings, control, next, after: ledger.data().totals };
}

describe("F24-1: a snapshot of the books", () => {
  it("restored with the events journaled after it gives the books every event replayed gives", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.nat(60), (steps, cut) => {
        const { journal, events } = recording();
        const original = new Ledger(journal);
        let state: unknown;
        let journaledBefore = 0;
        steps.forEach((apply, i) => {
          if (i === Math.min(cut, steps.length - 1)) {
            state = JSON.parse(JSON.stringify(original.state()));
            journaledBefore = events.length;
          }
          apply(original);
        });
        state ??= JSON.parse(JSON.stringify(original.state()));
        const restored = Ledger.restore(parseState("snapshot", state), events.slice(journaledBefore));
        expect(answers(restored)).toEqual(answers(Ledger.replay(events)));
      }),
      { numRuns: 300 },
    );
  });

  it("leaves out the refused callers, which are not in the books", () => {
    const ledger = new Ledger();
    ledger.countRefusedCaller();
    ledger.countCall("chargePayment", "k-1", "o-1");
    expect(ledger.snapshot().unauthorized).toBe(1);
    const restored = Ledger.restore(parseState("snapshot", ledger.state()), []);
    expect(restored.snapshot()).toMatchObject({ calls: 1, unauthorized: 0 });
  });

  it("is refused, naming the blob and the field, when it is not the books' shape", () => {
    const state = JSON.parse(JSON.stringify(new Ledger().state())) as Record<string, unknown>;
    expect(() =>
      parseState("snapshot-000003.json", { ...state, effects: [["chargePayment", "o-1"]] }),
    ).toThrow(ValidationError);
    expect(() => parseState("snapshot-000003.json", { ...state, calls: -1 })).toThrow(
      /invalid snapshot-000003\.json: calls: /,
    );
    expect(() => parseState("snapshot-000003.json", { ...state, version: 2 })).toThrow(/version/);
  });
});
