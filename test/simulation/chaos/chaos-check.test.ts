import { describe, expect, it } from "vitest";
import { checkChaos } from "../../../laptop/simulation/chaos/chaos-check.js";
import { Ledger } from "../../../partner/ledger.js";
import { EFFECT_OPERATIONS, UNDO_OF } from "../../../src/domain/partner-operations.js";
import type { ProcessState, StateRecord } from "../../../src/domain/state-record.js";
import { pendingRecord } from "../../support/records.js";

const AT = new Date("2026-01-01T00:00:00Z");

function record(
  orderId: string,
  processState: ProcessState,
  overrides: Partial<StateRecord> = {},
): StateRecord {
  return { ...pendingRecord(orderId), processState, ...overrides };
}

/** A ledger where `processed` got every effect once and `compensated` got each one undone. */
function ledgerFor(processed: readonly string[], compensated: readonly string[]): Ledger {
  const ledger = new Ledger();
  for (const orderId of [...processed, ...compensated]) {
    for (const operation of EFFECT_OPERATIONS) {
      const result = ledger.applyEffect(`${orderId}:${operation}`, operation, orderId, AT);
      if (compensated.includes(orderId) && result.kind === "effect")
        ledger.applyUndo(`${orderId}:${operation}:undo`, UNDO_OF[operation], orderId, result.reference);
    }
  }
  return ledger;
}

function evidence(records: StateRecord[], ledger: Ledger, accepted = records.map((r) => r.orderId)) {
  return {
    accepted,
    records: new Map(records.map((r) => [r.orderId, r])),
    deadLettered: new Map<string, string>(),
    writes: [],
    ledger: ledger.snapshot(),
    maxRecoveries: 20,
    onExhausted: "error" as const,
  };
}

const refused = {
  kind: "permanent" as const,
  code: "PartnerRejected",
  message: "card-declined",
  step: null,
  at: "2026-01-01T00:00:00.000Z",
};

describe("the chaos check", () => {
  it("passes a run where every order ended and the partner's books agree with the records", () => {
    const records = [
      record("o-1", "Processed"),
      record("o-2", "Compensated"),
      record("o-3", "Error", { lastError: refused }),
    ];
    const ledger = ledgerFor(["o-1"], ["o-2"]);
    ledger.reject("o-3:reserveInventory", "reserveInventory", "o-3", null, "out-of-stock");
    expect(checkChaos(evidence(records, ledger))).toEqual([]);
  });

  it("finds an order in Error for a refusal the partner never made, and one stopped by an operator", () => {
    const operator = { ...refused, kind: "operator" as const, code: "OperatorCompensate" };
    const violations = checkChaos(
      evidence(
        [record("o-1", "Error", { lastError: refused }), record("o-2", "Error", { lastError: operator })],
        new Ledger(),
      ),
    ).join("\n");
    expect(violations).toMatch(/o-1 is Error for a refusal the partner's ledger does not show/);
    expect(violations).toMatch(/o-2 is Error because of operator/);
  });

  it("F24-4: accepts an order parked with PartnerUnavailable for an outage it deferred through, no other", () => {
    const minute = 60_000;
    const start = Date.parse("2026-01-01T00:00:00.000Z");
    const parkedAt = (since: number, at: number) =>
      record("o-p", "Error", {
        deferredSince: new Date(since).toISOString(),
        lastError: {
          kind: "stalled",
          code: "PartnerUnavailable",
          message: "the circuit breaker ... is past the longest deferral",
          step: "reserveInventory",
          at: new Date(at).toISOString(),
        },
      });
    const run = (parked: StateRecord, outages: { from: number; to: number }[]) =>
      checkChaos({ ...evidence([parked], new Ledger()), outages, breakerMaxOpenMs: minute });
    const outage = { from: start, to: start + 15 * minute };
    // Deferred during the outage, parked before its end plus one longest open period: the outage's doing.
    expect(run(parkedAt(start + minute, start + 11 * minute), [outage])).toEqual([]);
    // No outage in the run, or deferred before it began, or parked long after it: not explained by it.
    expect(run(parkedAt(start + minute, start + 11 * minute), []).join("\n")).toMatch(
      /o-p is Error because of stalled/,
    );
    expect(run(parkedAt(start - minute, start + 9 * minute), [outage])).not.toEqual([]);
    expect(run(parkedAt(start + minute, start + 17 * minute), [outage])).not.toEqual([]);
  });

  it("finds an effect applied twice for one order and operation", () => {
    const ledger = ledgerFor(["o-1"], []);
    ledger.applyEffect("o-1:chargePayment:again", "chargePayment", "o-1", AT);
    const violations = checkChaos(evidence([record("o-1", "Processed")], ledger));
    expect(violations.join("\n")).toMatch(/o-1: chargePayment applied 2 times/);
  });

  it("finds a Processed order with an effect missing or undone, and a Compensated one with an effect left", () => {
    const ledger = ledgerFor([], ["o-1"]);
    ledger.applyEffect("o-2:reserveInventory", "reserveInventory", "o-2", AT);
    const violations = checkChaos(
      evidence([record("o-1", "Processed"), record("o-2", "Compensated")], ledger),
    ).join("\n");
    expect(violations).toMatch(/o-1: Processed, but reserveInventory is applied 1 time\(s\), 0 not undone/);
    expect(violations).toMatch(/o-2: Compensated, but reserveInventory is still applied/);
  });

  it("finds an accepted order with no record, a record not terminal, and effects for an order never recorded", () => {
    const ledger = ledgerFor(["ghost"], []);
    const violations = checkChaos(evidence([record("o-1", "Processing")], ledger, ["o-1", "o-2"])).join("\n");
    expect(violations).toMatch(/o-1 is stuck in Processing/);
    expect(violations).toMatch(/o-2 was lost/);
    expect(violations).toMatch(/ghost: the partner applied effects for an order with no record/);
  });

  it("finds an order left in Error or CompensationFailed by a crash or an outage rather than a refusal", () => {
    const exhausted = {
      kind: "transient" as const,
      code: "RecoveriesExhausted",
      message: "",
      step: null,
      at: "2026-01-01T00:00:00.000Z",
    };
    const violations = checkChaos(
      evidence(
        [
          record("o-1", "Error", { lastError: exhausted }),
          record("o-2", "CompensationFailed", {
            lastError: { ...exhausted, code: "CompensationRecoveriesExhausted" },
          }),
        ],
        new Ledger(),
      ),
    ).join("\n");
    expect(violations).toMatch(/o-1 is Error because of transient \(RecoveriesExhausted\), not a refusal/);
    expect(violations).toMatch(/o-2 is CompensationFailed because of transient/);
  });
});
