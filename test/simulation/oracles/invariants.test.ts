import { describe, expect, it } from "vitest";
import { checkInvariants, type InvariantInput } from "../../../laptop/simulation/oracles/invariants.js";
import { toAudited } from "../../../laptop/simulation/oracles/state-audit.js";
import type { PartnerLedger } from "../../../partner/partner-service.js";
import { applyTransition } from "../../../src/domain/apply-transition.js";
import type { StateRecord } from "../../../src/domain/state-record.js";
import type { Command } from "../../../src/domain/transition-commands.js";
import { pendingRecord, T0 } from "../../support/records.js";

function ledger(
  effects: { key: string; orderId: string; operation?: string }[] = [],
  calls: Record<string, number> = {},
  duplicates = 0,
) {
  const effectLog = effects.map((e) => ({
    idempotencyKey: e.key,
    orderId: e.orderId,
    operation: e.operation ?? "reserveInventory",
  }));
  return {
    effectLog,
    effectsByOrder: Object.fromEntries(
      [...new Set(effectLog.map((e) => e.orderId))].map((id) => [
        id,
        effectLog.filter((e) => e.orderId === id),
      ]),
    ),
    effectsForKey: (key: string) => effects.filter((e) => e.key === key).length,
    callsForOrder: (orderId: string) => calls[orderId] ?? 0,
    duplicateEffects: duplicates,
  } as unknown as PartnerLedger;
}

function step(
  record: StateRecord,
  actor: "starter" | "orchestration" | "supervisor",
  command: Command,
): StateRecord {
  const result = applyTransition(record, actor, command);
  if (!result.ok) throw result.error;
  return result.value.record;
}

const created = pendingRecord("ord-1");
const claimed = step(created, "starter", { type: "claim", now: T0, attemptTimeoutMs: 1_000 });

interface RecordWrite {
  readonly orderId: string;
  readonly before: StateRecord | null;
  readonly after: StateRecord;
}

/** The run's input, with writes given as whole records and kept as the audit keeps them. */
function input(
  overrides: Partial<Omit<InvariantInput, "writes">> & { writes?: RecordWrite[] },
): InvariantInput {
  const writes: RecordWrite[] = overrides.writes ?? [
    { orderId: "ord-1", before: null, after: created },
    { orderId: "ord-1", before: created, after: claimed },
  ];
  return {
    submitted: ["ord-1"],
    records: new Map([["ord-1", { ...created, processState: "Processed" as const }]]),
    deadLettered: new Map(),
    ledger: ledger(),
    maxRecoveries: 2,
    onExhausted: "error",
    ...overrides,
    writes: writes.map(({ orderId, before, after }) => ({
      orderId,
      before: before && toAudited(before),
      after: toAudited(after),
    })),
  };
}

describe("checkInvariants", () => {
  it("passes a clean run", () => {
    expect(checkInvariants(input({}))).toEqual({ ok: true, violations: [] });
  });

  it("1: finds an order that is lost, and one that is stuck", () => {
    expect(checkInvariants(input({ records: new Map() })).violations).toEqual([
      "1: ord-1 was lost: no record and not dead-lettered",
    ]);
    expect(
      checkInvariants(
        input({ records: new Map(), deadLettered: new Map([["ord-1", "InvalidOrderMessage"]]) }),
      ).ok,
    ).toBe(true);
    expect(checkInvariants(input({ records: new Map([["ord-1", claimed]]) })).violations).toEqual([
      "1: ord-1 is stuck in Processing",
    ]);
  });

  it("2: finds an effect applied twice for one key, or twice for one order and operation", () => {
    const twice = ledger([
      { key: "ord-1:chargePayment", orderId: "ord-1" },
      { key: "ord-1:chargePayment", orderId: "ord-1" },
    ]);
    expect(checkInvariants(input({ ledger: twice })).violations).toEqual([
      "2: key ord-1:chargePayment applied 2 times",
    ]);
    expect(checkInvariants(input({ ledger: ledger([], {}, 1) })).violations).toEqual([
      "2: 1 duplicate effects at the partner",
    ]);
  });

  it("3: accepts the starter giving back a claim it could not start", () => {
    const released = step(claimed, "starter", {
      type: "releaseClaim",
      instanceId: "ord-1:1",
      now: T0,
      retryAt: T0,
      reason: "start failed",
    });
    expect(
      checkInvariants(input({ writes: [{ orderId: "ord-1", before: claimed, after: released }] })).violations,
    ).toEqual([]);
  });

  it("3: finds a write by someone who did not own the record", () => {
    const stolen = { ...claimed, lockedBy: "ord-1:7" };
    const violations = checkInvariants(
      input({ writes: [{ orderId: "ord-1", before: claimed, after: stolen }] }),
    ).violations;
    expect(violations).toEqual(["3: ord-1: Processing (ord-1:1) -> Processing (ord-1:7) fits no rule"]);
    const hijack = { ...claimed, processState: "Processed" as const, lockedBy: "ord-1:7" };
    expect(
      checkInvariants(input({ writes: [{ orderId: "ord-1", before: claimed, after: hijack }] }))
        .violations[0],
    ).toMatch(/^3: ord-1: Processing \(ord-1:1\) -> Processed \(ord-1:7\) fits no rule/);
    const early = step(claimed, "supervisor", {
      type: "recover",
      expectedLockedBy: "ord-1:1",
      now: claimed.completeBy ?? T0,
      policy: {
        maxRecoveries: 2,
        backoff: { baseMs: 1, capMs: 1 },
        extendedBackoffAfter: 2,
        extendedDelayMs: 1,
        onExhausted: "error",
      },
      random: () => 0,
    });
    const premature = { ...early, updatedAt: T0 };
    expect(
      checkInvariants(input({ writes: [{ orderId: "ord-1", before: claimed, after: premature }] }))
        .violations[0],
    ).toMatch(/fits no rule/);
  });

  it("4: finds failureCount passing the limit outside Error", () => {
    const over = { ...created, failureCount: 3 };
    expect(
      checkInvariants(input({ writes: [{ orderId: "ord-1", before: created, after: over }] })).violations,
    ).toContain("4: ord-1 passed 2 failures in Pending");
  });

  it("4: lets a record past the limit go to a compensation only when the policy says so", () => {
    const over = { ...created, failureCount: 3, processState: "Compensating" as const };
    const writes = [{ orderId: "ord-1", before: created, after: over }];
    expect(checkInvariants(input({ writes })).violations).toContain(
      "4: ord-1 passed 2 failures in Compensating",
    );
    expect(checkInvariants(input({ writes, onExhausted: "compensate" })).violations).not.toContain(
      "4: ord-1 passed 2 failures in Compensating",
    );
  });

  it("6: finds an order left for an operator without its cause", () => {
    const at = T0;
    const records = (processState: "Error" | "CompensationFailed", lastError: StateRecord["lastError"]) =>
      new Map([["ord-1", { ...created, processState, lastError }]]);
    expect(checkInvariants(input({ records: records("Error", null) })).violations).toEqual([
      "6: ord-1 is Error with no lastError",
    ]);
    const expired = { kind: "timeout", code: "AttemptExpired", message: "", step: null, at } as const;
    expect(checkInvariants(input({ records: records("CompensationFailed", expired) })).violations).toEqual([
      "6: ord-1 is CompensationFailed with a cause that is not its own (timeout AttemptExpired)",
    ]);
    for (const cause of [
      { kind: "permanent", code: "Http422", message: "card-declined", step: "chargePayment", at },
      { kind: "timeout", code: "RecoveriesExhausted", message: "3 failures", step: null, at },
      { kind: "stalled", code: "CompensationRecoveriesExhausted", message: "6 attempts", step: null, at },
      { kind: "operator", code: "Resubmitted", message: "by alice", step: null, at },
    ] as const) {
      expect(checkInvariants(input({ records: records("Error", cause) })).violations).toEqual([]);
    }
  });

  it("7: finds a step that is or may be applied but is missing from the compensation log", () => {
    const steps = created.steps.map((s, i) => (i === 0 ? { ...s, status: "InDoubt" as const } : s));
    const records = new Map([["ord-1", { ...created, processState: "Processed" as const, steps }]]);
    expect(checkInvariants(input({ records })).violations).toEqual([
      "7: ord-1: reserveInventory is InDoubt but not in the compensation log",
    ]);
  });

  it("8: finds an order whose steps, or whose effects at the partner, are not those of its workflow version", () => {
    const v1 = pendingRecord("ord-1", { workflowVersion: 1 });
    const v1Steps = v1.steps.slice(0, 3);
    const notified = ledger([{ key: "ord-1:notifyCustomer", orderId: "ord-1", operation: "notifyCustomer" }]);
    const processed = { ...v1, steps: v1Steps, processState: "Processed" as const };
    expect(
      checkInvariants(input({ records: new Map([["ord-1", processed]]), ledger: notified })).violations,
    ).toEqual(["8: ord-1: the partner applied notifyCustomer, not a step of version 1"]);
    // A version-1 record with version 2's four steps.
    expect(
      checkInvariants(input({ records: new Map([["ord-1", { ...processed, steps: v1.steps }]]) })).violations,
    ).toEqual([
      "8: ord-1: has steps reserveInventory, chargePayment, arrangeShipment, notifyCustomer, but version 1 has reserveInventory, chargePayment, arrangeShipment",
    ]);
    expect(checkInvariants(input({ records: new Map([["ord-1", processed]]) })).ok).toBe(true);
  });

  it("5: finds an order that cost more partner calls than its budget", () => {
    expect(checkInvariants(input({ ledger: ledger([], { "ord-1": 31 }) })).violations).toEqual([
      "5: ord-1 cost 31 partner calls, budget 30",
    ]);
  });
});
