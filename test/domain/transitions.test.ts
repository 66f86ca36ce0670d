import { describe, expect, it } from "vitest";
import { applyTransition, TransitionError } from "../../src/domain/apply-transition.js";
import { HISTORY_LIMIT } from "../../src/domain/record-history.js";
import { recoveryDelayMs } from "../../src/domain/recovery-transitions.js";
import { heardProcessing, type StateRecord } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import type {
  Actor,
  Command,
  RecoveryPolicy,
  TransitionErrorCode,
} from "../../src/domain/transition-commands.js";
import { ORDER_STEPS, type StepName } from "../../src/domain/workflow.js";
import { pendingRecord, T0 } from "../support/records.js";

const policy: RecoveryPolicy = {
  maxRecoveries: 2,
  backoff: { baseMs: 1_000, capMs: 60_000 },
  extendedBackoffAfter: 1,
  extendedDelayMs: 600_000,
  onExhausted: "error",
};
const at = (ms: number) => addMilliseconds(T0, ms);

function apply(record: StateRecord, actor: Actor, command: Command): StateRecord {
  const result = applyTransition(record, actor, command);
  if (!result.ok) throw result.error;
  return result.value.record;
}

function refusal(record: StateRecord, actor: Actor, command: Command): TransitionError {
  const result = applyTransition(record, actor, command);
  if (result.ok) throw new Error(`expected ${command.type} to be refused`);
  expect(result.error).toBeInstanceOf(TransitionError);
  return result.error;
}

function expectRefused(record: StateRecord, actor: Actor, command: Command, code: TransitionErrorCode) {
  expect(refusal(record, actor, command).code).toBe(code);
}

const claim = (now = at(0)): Command => ({ type: "claim", now, attemptTimeoutMs: 60_000 });
const start = (instanceId: string, step: StepName, now = at(1)): Command => ({
  type: "startStep",
  instanceId,
  step,
  now,
  completeBy: addMilliseconds(now, 30_000),
  requestedCalls: 4,
  amplification: 1,
});
const complete = (instanceId: string, step: StepName, now = at(2)): Command => ({
  type: "completeStep",
  instanceId,
  step,
  now,
  reference: `ref-${step}`,
});

function claimed(record = pendingRecord()): StateRecord {
  return apply(record, "starter", claim());
}

function withCompletedSteps(count: number): StateRecord {
  let record = claimed();
  for (const step of ORDER_STEPS.slice(0, count)) {
    record = apply(record, "orchestration", start("ord-1:1", step));
    record = apply(record, "orchestration", complete("ord-1:1", step));
  }
  return record;
}

describe("claim", () => {
  it("moves Pending to Processing, owned by the next attempt, with a deadline", () => {
    const record = claimed();
    expect(record).toMatchObject({
      processState: "Processing",
      attempt: 1,
      lockedBy: "ord-1:1",
      completeBy: at(60_000),
      updatedAt: at(0),
    });
  });

  it("is refused to every actor but the starter, to a locked record, and before notBefore", () => {
    for (const actor of ["submission", "orchestration", "supervisor", "operator"] as const) {
      expectRefused(pendingRecord(), actor, claim(), "notAllowed");
    }
    expectRefused(pendingRecord("ord-1", { lockedBy: "ord-1:9" }), "starter", claim(), "notOwner");
    expectRefused(pendingRecord("ord-1", { notBefore: at(5) }), "starter", claim(at(4)), "notYetDue");
    expect(applyTransition(pendingRecord("ord-1", { notBefore: at(5) }), "starter", claim(at(5))).ok).toBe(
      true,
    );
    expectRefused(claimed(), "starter", claim(), "notAllowed");
  });
});

describe("steps", () => {
  it("runs steps in order, grants an allowance from the budget, logs each completion for compensation", () => {
    let record = claimed();
    expectRefused(record, "orchestration", start("ord-1:1", "chargePayment"), "stepOutOfOrder");
    record = apply(record, "orchestration", start("ord-1:1", "reserveInventory"));
    expect(record.steps[0]).toMatchObject({
      status: "Running",
      attempt: 1,
      allowance: 4,
      completeBy: at(30_001),
    });
    expect(record.completeBy).toBe(at(30_001));
    expect(record.retryBudget).toEqual({ limit: 30, granted: 4, undoReserve: 0 });
    record = apply(record, "orchestration", complete("ord-1:1", "reserveInventory"));
    expect(record.steps[0]).toMatchObject({ status: "Completed", reference: "ref-reserveInventory" });
    expect(record.compensationLog).toEqual([
      {
        sequence: 1,
        step: "reserveInventory",
        idempotencyKey: "ord-1:reserveInventory",
        reference: "ref-reserveInventory",
        recordedAt: at(2),
      },
    ]);
  });

  it("treats a repeated start or completion by the owner as already done", () => {
    const running = apply(claimed(), "orchestration", start("ord-1:1", "reserveInventory"));
    const again = applyTransition(running, "orchestration", start("ord-1:1", "reserveInventory", at(9)));
    expect(again.ok && again.value.changed).toBe(false);
    expect(again.ok && again.value.record).toBe(running);
    const done = apply(running, "orchestration", complete("ord-1:1", "reserveInventory"));
    const repeat = applyTransition(done, "orchestration", complete("ord-1:1", "reserveInventory", at(9)));
    expect(repeat.ok && repeat.value.changed).toBe(false);
    expect(done.compensationLog).toHaveLength(1);
  });

  it("refuses a step to an orchestration that does not own the record", () => {
    const record = claimed();
    expectRefused(record, "orchestration", start("ord-1:0", "reserveInventory"), "notOwner");
    expectRefused(record, "orchestration", start("ord-1:2", "reserveInventory"), "notOwner");
  });

  it("stops granting calls when the budget is spent", () => {
    let record = claimed(pendingRecord("ord-1", { retryBudget: { limit: 5, granted: 0, undoReserve: 0 } }));
    record = apply(record, "orchestration", start("ord-1:1", "reserveInventory"));
    record = apply(record, "orchestration", complete("ord-1:1", "reserveInventory"));
    record = apply(record, "orchestration", start("ord-1:1", "chargePayment"));
    expect(record.steps[1]?.allowance).toBe(1);
    record = apply(record, "orchestration", complete("ord-1:1", "chargePayment"));
    expectRefused(record, "orchestration", start("ord-1:1", "arrangeShipment"), "budgetExhausted");
  });
});

describe("finishing", () => {
  it("finishes only when every step completed, releasing the lock", () => {
    expectRefused(
      withCompletedSteps(2),
      "orchestration",
      { type: "finish", instanceId: "ord-1:1", now: at(3) },
      "stepsIncomplete",
    );
    const done = apply(withCompletedSteps(ORDER_STEPS.length), "orchestration", {
      type: "finish",
      instanceId: "ord-1:1",
      now: at(3),
    });
    expect(done).toMatchObject({ processState: "Processed", lockedBy: null, completeBy: null });
  });

  it("fails to Error with the fault when nothing needs undoing, but demands compensation otherwise", () => {
    const running = apply(claimed(), "orchestration", start("ord-1:1", "reserveInventory"));
    const failure = {
      kind: "permanent",
      code: "OutOfStock",
      message: "none left",
      step: "reserveInventory",
    } as const;
    const failed = apply(running, "orchestration", {
      type: "fail",
      instanceId: "ord-1:1",
      now: at(3),
      failure,
    });
    expect(failed).toMatchObject({ processState: "Error", lockedBy: null, completeBy: null });
    expect(failed.steps[0]?.status).toBe("Failed");
    expect(failed.lastError).toEqual({ ...failure, at: at(3) });
    const partly = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    expectRefused(
      partly,
      "orchestration",
      { type: "fail", instanceId: "ord-1:1", now: at(3), failure: { ...failure, step: "chargePayment" } },
      "compensationRequired",
    );
  });
});

describe("compensation", () => {
  const failure = {
    kind: "permanent",
    code: "CardDeclined",
    message: "declined",
    step: "arrangeShipment",
  } as const;

  function compensating(): StateRecord {
    const running = apply(withCompletedSteps(2), "orchestration", start("ord-1:1", "arrangeShipment"));
    return apply(running, "orchestration", {
      type: "beginCompensation",
      instanceId: "ord-1:1",
      now: at(4),
      completeBy: at(100_000),
      failure,
      undo: { callsPerRequest: 2, amplification: 1 },
    });
  }
  const undo = (step: StepName, outcome: "compensated" | "failed" = "compensated"): Command => ({
    type: "compensateStep",
    instanceId: "ord-1:1",
    step,
    now: at(5),
    outcome,
  });
  const finishUndo: Command = { type: "finishCompensation", instanceId: "ord-1:1", now: at(6) };

  it("undoes completed steps in reverse order, then is Compensated", () => {
    let record = compensating();
    expect(record).toMatchObject({
      processState: "Compensating",
      lockedBy: "ord-1:1",
      completeBy: at(100_000),
    });
    expect(record.steps[2]?.status).toBe("Failed");
    expectRefused(record, "orchestration", undo("reserveInventory"), "stepOutOfOrder");
    expectRefused(record, "orchestration", finishUndo, "compensationIncomplete");
    record = apply(record, "orchestration", undo("chargePayment"));
    record = apply(record, "orchestration", undo("reserveInventory"));
    record = apply(record, "orchestration", finishUndo);
    expect(record).toMatchObject({ processState: "Compensated", lockedBy: null, completeBy: null });
    expect(record.steps.map((s) => s.status)).toEqual(["Compensated", "Compensated", "Failed", "NotStarted"]);
  });

  it("ends in CompensationFailed when an undo fails, and an operator can retry it", () => {
    let record = apply(compensating(), "orchestration", undo("chargePayment", "failed"));
    expectRefused(record, "orchestration", undo("reserveInventory"), "stepOutOfOrder");
    record = apply(record, "orchestration", finishUndo);
    expect(record).toMatchObject({ processState: "CompensationFailed", lockedBy: null });
    expect(record.steps.map((s) => s.status)).toEqual([
      "Completed",
      "CompensationFailed",
      "Failed",
      "NotStarted",
    ]);
    const retry = apply(record, "operator", { type: "compensate", now: at(7), reason: "retry" });
    // Handed to the starter: unlocked and due now; the claim makes the next attempt its owner.
    expect(retry).toMatchObject({
      processState: "Compensating",
      attempt: 1,
      lockedBy: null,
      notBefore: at(7),
    });
    expectRefused(retry, "orchestration", undo("chargePayment"), "notOwner");
    const claimedAgain = apply(retry, "starter", claim(at(8)));
    expect(claimedAgain).toMatchObject({ processState: "Compensating", attempt: 2, lockedBy: "ord-1:2" });
    const undone = apply(claimedAgain, "orchestration", {
      ...undo("chargePayment"),
      instanceId: "ord-1:2",
    } as Command);
    expect(undone.steps[1]?.status).toBe("Compensated");
  });

  it("needs a completed step to begin", () => {
    const running = apply(claimed(), "orchestration", start("ord-1:1", "reserveInventory"));
    expectRefused(
      running,
      "orchestration",
      {
        type: "beginCompensation",
        instanceId: "ord-1:1",
        now: at(4),
        completeBy: at(9),
        failure,
        undo: { callsPerRequest: 2, amplification: 1 },
      },
      "nothingToCompensate",
    );
  });

  it("hands an expired compensation back for another attempt, and fails it past the recovery limit", () => {
    let record = compensating();
    const cause = record.lastError;
    const recover = (expectedLockedBy: string, now: string): Command => ({
      type: "recover",
      expectedLockedBy,
      now,
      policy,
      random: () => 0.5,
    });
    expectRefused(record, "supervisor", recover("ord-1:1", at(99_999)), "notExpired");
    let now = 100_000;
    for (let recovery = 1; recovery <= policy.maxRecoveries; recovery++) {
      record = apply(record, "supervisor", recover(record.lockedBy ?? "", at(now)));
      expect(record).toMatchObject({
        processState: "Compensating",
        lockedBy: null,
        compensationRecoveries: recovery,
        failureCount: 0,
      });
      expect(record.lastError).toEqual(cause);
      record = apply(record, "starter", claim(record.notBefore));
      now = Date.parse(record.completeBy ?? "") - Date.parse(T0);
    }
    const exhausted = apply(record, "supervisor", recover(record.lockedBy ?? "", at(now)));
    expect(exhausted).toMatchObject({
      processState: "CompensationFailed",
      lockedBy: null,
      lastError: { kind: "stalled", code: "CompensationRecoveriesExhausted" },
    });
  });
});

describe("Supervisor recovery", () => {
  const recover = (expectedLockedBy: string, now: string): Command => ({
    type: "recover",
    expectedLockedBy,
    now,
    policy,
    random: () => 0.5,
  });

  it("returns an expired attempt to Pending with backoff, its running step in doubt and logged", () => {
    const running = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    expectRefused(running, "supervisor", recover("ord-1:1", at(30_000)), "notExpired");
    const recovered = apply(running, "supervisor", recover("ord-1:1", at(30_001)));
    expect(recovered).toMatchObject({
      processState: "Pending",
      lockedBy: null,
      completeBy: null,
      failureCount: 1,
      notBefore: at(30_001 + 500),
      lastError: { kind: "timeout", code: "AttemptExpired", step: "chargePayment" },
    });
    expect(recovered.lastError?.message).toContain("chargePayment is in doubt");
    expect(recovered.steps.map((s) => s.status)).toEqual([
      "Completed",
      "InDoubt",
      "NotStarted",
      "NotStarted",
    ]);
    expect(recovered.compensationLog.map((e) => [e.step, e.reference])).toEqual([
      ["reserveInventory", "ref-reserveInventory"],
      ["chargePayment", null],
    ]);
    const next = apply(recovered, "starter", claim(at(30_501)));
    expect(next.lockedBy).toBe("ord-1:2");
    // The next attempt retries the in-doubt step (same idempotency key); completing it fills its entry.
    const retried = apply(next, "orchestration", start("ord-1:2", "chargePayment", at(30_502)));
    const completed = apply(retried, "orchestration", complete("ord-1:2", "chargePayment", at(30_503)));
    expect(completed.compensationLog.map((e) => [e.sequence, e.step, e.reference])).toEqual([
      [1, "reserveInventory", "ref-reserveInventory"],
      [2, "chargePayment", "ref-chargePayment"],
    ]);
  });

  it("drops an in-doubt step's log entry when its retry is refused: the partner applied nothing", () => {
    const running = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    let record = apply(running, "supervisor", recover("ord-1:1", at(30_001)));
    record = apply(record, "starter", claim(record.notBefore));
    record = apply(record, "orchestration", start("ord-1:2", "chargePayment", record.notBefore));
    const failure = {
      kind: "permanent",
      code: "CardDeclined",
      message: "declined",
      step: "chargePayment",
    } as const;
    record = apply(record, "orchestration", {
      type: "beginCompensation",
      instanceId: "ord-1:2",
      now: record.notBefore,
      completeBy: at(999_999),
      failure,
      undo: { callsPerRequest: 2, amplification: 1 },
    });
    expect(record.steps[1]?.status).toBe("Failed");
    expect(record.compensationLog.map((e) => e.step)).toEqual(["reserveInventory"]);
  });

  it("is fenced on the expired lockedBy it saw", () => {
    const record = claimed();
    expectRefused(record, "supervisor", recover("ord-1:0", at(60_000)), "notOwner");
    expectRefused(record, "orchestration", recover("ord-1:1", at(60_000)), "notAllowed");
  });

  it("sends the record to Error once failures pass the limit, never leaving it Pending", () => {
    let record = pendingRecord();
    let now = 0;
    for (let failure = 1; failure <= policy.maxRecoveries + 1; failure++) {
      record = apply(record, "starter", claim(record.notBefore));
      // Each attempt reaches the Agent: it starts its first step.
      record = apply(
        record,
        "orchestration",
        start(record.lockedBy ?? "", "reserveInventory", record.notBefore),
      );
      now = Date.parse(record.completeBy ?? "") - Date.parse(T0);
      record = apply(record, "supervisor", recover(record.lockedBy ?? "", at(now)));
      expect(record.failureCount).toBe(failure);
      expect(record.processState).toBe(failure > policy.maxRecoveries ? "Error" : "Pending");
    }
    expect(record.lastError?.code).toBe("RecoveriesExhausted");
    expect(record.steps[0]?.status).toBe("InDoubt");
    expect(record.compensationLog.map((e) => e.step)).toEqual(["reserveInventory"]);
  });

  it("past the limit, hands the in-doubt and completed steps to a compensation when the policy says so", () => {
    const compensating = { ...policy, onExhausted: "compensate" as const };
    let handed = pendingRecord();
    for (let failure = 1; failure <= policy.maxRecoveries + 1; failure++) {
      handed = apply(handed, "starter", claim(handed.notBefore));
      const owner = handed.lockedBy ?? "";
      handed = apply(handed, "orchestration", start(owner, "reserveInventory", handed.notBefore));
      const expiredAt = at(Date.parse(handed.completeBy ?? "") - Date.parse(T0));
      handed = apply(handed, "supervisor", { ...recover(owner, expiredAt), policy: compensating } as Command);
    }
    expect(handed).toMatchObject({
      processState: "Compensating",
      lockedBy: null,
      completeBy: null,
      compensationRecoveries: 0,
      lastError: { code: "RecoveriesExhausted" },
    });
    expect(handed.notBefore).toBe(handed.updatedAt);
    expect(handed.steps[0]?.status).toBe("InDoubt");
  });

  it("lets the starter give back a claim it could not start, without a failure, until a step starts", () => {
    const record = claimed();
    const release: Command = {
      type: "releaseClaim",
      instanceId: "ord-1:1",
      now: at(1),
      retryAt: at(1_001),
      reason: "durable client unavailable",
    };
    expect(apply(record, "starter", release)).toMatchObject({
      processState: "Pending",
      lockedBy: null,
      completeBy: null,
      notBefore: at(1_001),
      failureCount: 0,
      attempt: 1,
      lastError: { kind: "transient", code: "StartFailed", message: "durable client unavailable" },
    });
    expectRefused(record, "starter", { ...release, instanceId: "ord-1:2" } as Command, "notOwner");
    const running = apply(record, "orchestration", start("ord-1:1", "reserveInventory"));
    expectRefused(running, "starter", release, "stepState");
  });

  it("counts no failure for an attempt that started no step, however often it expires", () => {
    let record = pendingRecord();
    for (let expiry = 1; expiry <= policy.maxRecoveries + 3; expiry++) {
      record = apply(record, "starter", claim(record.notBefore));
      const expiredAt = at(Date.parse(record.completeBy ?? "") - Date.parse(T0));
      record = apply(record, "supervisor", recover(record.lockedBy ?? "", expiredAt));
      expect(record).toMatchObject({ processState: "Pending", failureCount: 0, lockedBy: null });
      expect(record.lastError?.code).toBe("AttemptNotStarted");
    }
  });

  it("waits the extended delay once past the first threshold", () => {
    expect(recoveryDelayMs(policy, 1, () => 0.999)).toBe(999);
    expect(recoveryDelayMs(policy, 2, () => 0)).toBe(600_000);
  });
});

describe("operator", () => {
  it("resubmits an Error with its failures cleared and a fresh budget", () => {
    const running = apply(claimed(), "orchestration", start("ord-1:1", "reserveInventory"));
    const failure = { kind: "permanent", code: "X", message: "x", step: "reserveInventory" } as const;
    const failed = apply(running, "orchestration", {
      type: "fail",
      instanceId: "ord-1:1",
      now: at(3),
      failure,
    });
    const resubmitted = apply(failed, "operator", { type: "resubmit", now: at(4), reason: "fixed stock" });
    expect(resubmitted).toMatchObject({
      processState: "Pending",
      failureCount: 0,
      notBefore: at(4),
      retryBudget: { granted: 0 },
      lastError: { kind: "operator", message: "fixed stock" },
    });
    expect(resubmitted.steps[0]?.status).toBe("NotStarted");
    expectRefused(resubmitted, "operator", { type: "resubmit", now: at(5), reason: "again" }, "notAllowed");
  });
});

describe("in-doubt steps in a compensation", () => {
  const undo = { callsPerRequest: 2, amplification: 1 } as const;

  /** reserveInventory completed, chargePayment in doubt, handed to a compensation and claimed by attempt 2. */
  function claimedCompensation(budget = { limit: 30, granted: 0, undoReserve: 12 }): StateRecord {
    let record = claimed(pendingRecord("ord-1", { retryBudget: { limit: 30, granted: 0, undoReserve: 12 } }));
    record = apply(record, "orchestration", start("ord-1:1", "reserveInventory"));
    record = apply(record, "orchestration", complete("ord-1:1", "reserveInventory"));
    record = apply(record, "orchestration", start("ord-1:1", "chargePayment"));
    const expired = apply(record, "supervisor", {
      type: "recover",
      expectedLockedBy: "ord-1:1",
      now: at(40_000),
      policy: { ...policy, maxRecoveries: 0, onExhausted: "compensate" },
      random: () => 0,
    });
    expect(expired.processState).toBe("Compensating");
    // What forward steps spent is set by each test.
    return { ...apply(expired, "starter", claim(at(40_000))), retryBudget: budget };
  }

  it("grants each request of the attempt its calls once, from the reserve forward steps could not spend", () => {
    const record = claimedCompensation({ limit: 20, granted: 8, undoReserve: 12 });
    const resume: Command = { type: "resumeCompensation", instanceId: "ord-1:2", now: at(40_001), undo };
    const granted = apply(record, "orchestration", resume);
    // Three requests: chargePayment resolved and undone, reserveInventory undone; 2 calls each.
    expect(granted.retryBudget.granted).toBe(8 + 6);
    expect(granted.steps.slice(0, 2).map((s) => [s.allowance, s.attempt])).toEqual([
      [2, 2],
      [2, 2],
    ]);
    const again = applyTransition(granted, "orchestration", { ...resume, now: at(40_002) });
    expect(again.ok && again.value.changed).toBe(false);
  });

  it("grants nothing when the budget is spent, and the compensation then ends failed, naming the cause", () => {
    const record = claimedCompensation({ limit: 20, granted: 20, undoReserve: 12 });
    const granted = apply(record, "orchestration", {
      type: "resumeCompensation",
      instanceId: "ord-1:2",
      now: at(40_001),
      undo,
    });
    expect(granted.steps[0]?.allowance).toBe(0);
    const failure = { kind: "budget", code: "UndoBudgetExhausted", message: "no calls left" } as const;
    const ended = apply(granted, "orchestration", {
      type: "finishCompensation",
      instanceId: "ord-1:2",
      now: at(40_002),
      failure,
    });
    expect(ended).toMatchObject({ processState: "CompensationFailed", lockedBy: null });
    expect(ended.lastError?.code).toBe("UndoBudgetExhausted");
  });

  it("fills in the reference of an in-doubt step the partner had applied, so it can be undone", () => {
    const record = claimedCompensation();
    expectRefused(
      record,
      "orchestration",
      {
        type: "compensateStep",
        instanceId: "ord-1:2",
        step: "chargePayment",
        now: at(40_001),
        outcome: "compensated",
      },
      "stepState",
    );
    const resolved = apply(record, "orchestration", {
      type: "resolveDoubt",
      instanceId: "ord-1:2",
      step: "chargePayment",
      now: at(40_001),
      applied: true,
      reference: "pay-1",
    });
    expect(resolved.steps[1]).toMatchObject({ status: "Completed", reference: "pay-1" });
    expect(resolved.compensationLog[1]).toMatchObject({
      sequence: 2,
      step: "chargePayment",
      reference: "pay-1",
    });
  });

  it("drops an in-doubt step the partner refused: nothing of it to undo", () => {
    const record = claimedCompensation();
    const resolved = apply(record, "orchestration", {
      type: "resolveDoubt",
      instanceId: "ord-1:2",
      step: "chargePayment",
      now: at(40_001),
      applied: false,
      reference: null,
    });
    expect(resolved.steps[1]?.status).toBe("NotStarted");
    expect(resolved.compensationLog.map((e) => e.step)).toEqual(["reserveInventory"]);
    const undone = apply(resolved, "orchestration", {
      type: "compensateStep",
      instanceId: "ord-1:2",
      step: "reserveInventory",
      now: at(40_002),
      outcome: "compensated",
    });
    expect(
      apply(undone, "orchestration", { type: "finishCompensation", instanceId: "ord-1:2", now: at(40_003) }),
    ).toMatchObject({ processState: "Compensated" });
  });

  it("gives an operator's compensation a fresh undo reserve", () => {
    const running = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    const expired = apply(running, "supervisor", {
      type: "recover",
      expectedLockedBy: "ord-1:1",
      now: at(40_000),
      policy: { ...policy, maxRecoveries: 0 },
      random: () => 0,
    });
    expect(expired.processState).toBe("Error");
    const spent = { ...expired, retryBudget: { limit: 30, granted: 29, undoReserve: 10 } };
    const handed = apply(spent, "operator", {
      type: "compensate",
      now: at(40_001),
      reason: "customer cancelled",
    });
    expect(handed.retryBudget.granted).toBe(20);
  });
});

describe("history", () => {
  it("records each transition by the update that makes it: who, what, from and to, step and failure code", () => {
    const running = apply(claimed(), "orchestration", start("ord-1:1", "reserveInventory"));
    const expired = apply(running, "supervisor", {
      type: "recover",
      expectedLockedBy: "ord-1:1",
      now: at(60_000),
      policy,
      random: () => 0,
    });
    expect(expired.history).toEqual([
      {
        at: at(0),
        actor: "starter",
        command: "claim",
        from: "Pending",
        to: "Processing",
        attempt: 1,
        step: null,
        code: null,
      },
      {
        at: at(1),
        actor: "orchestration",
        command: "startStep",
        from: "Processing",
        to: "Processing",
        attempt: 1,
        step: "reserveInventory",
        code: null,
      },
      {
        at: at(60_000),
        actor: "supervisor",
        command: "recover",
        from: "Processing",
        to: "Pending",
        attempt: 1,
        step: "reserveInventory",
        code: "AttemptExpired",
      },
    ]);
    const repeated = applyTransition(running, "orchestration", start("ord-1:1", "reserveInventory", at(2)));
    expect(repeated.ok && repeated.value.record.history).toHaveLength(2);
  });

  it("keeps the latest entries and counts the older ones into a summary, dropping none unseen", () => {
    let record = pendingRecord();
    for (let i = 0; i < HISTORY_LIMIT + 5; i++) {
      record = apply(record, "starter", claim(record.notBefore));
      const expiredAt = at(Date.parse(record.completeBy ?? "") - Date.parse(T0));
      record = apply(record, "supervisor", {
        type: "recover",
        expectedLockedBy: record.lockedBy ?? "",
        now: expiredAt,
        policy,
        random: () => 0,
      });
    }
    expect(record.history).toHaveLength(HISTORY_LIMIT);
    expect(record.historySummary).toMatchObject({
      entries: 50,
      commands: { claim: 25, recover: 25 },
      since: at(0),
    });
    expect(record.history[0]?.command).toBe("claim");
  });
});

describe("host interruptions: the host, not the order, let a deadline pass", () => {
  const interrupted = (expectedLockedBy: string, now: string, limit = 2): Command => ({
    type: "recover",
    expectedLockedBy,
    now,
    policy: { ...policy, maxHostInterruptions: limit },
    random: () => 0.5,
    interruption: "its orchestration's timer fired 40000 ms after the deadline (host down)",
  });
  const extend = (expectedLockedBy: string, now: string, completeBy: string, limit = 2): Command => ({
    type: "extendDeadline",
    expectedLockedBy,
    now,
    completeBy,
    reason: "its orchestration is still running",
    policy: { ...policy, maxHostInterruptions: limit },
  });

  it("recovers an interrupted attempt like an expired one, its running step in doubt, with no failure counted", () => {
    const running = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    const recovered = apply(running, "supervisor", interrupted("ord-1:1", at(70_000)));
    expect(recovered).toMatchObject({
      processState: "Pending",
      lockedBy: null,
      failureCount: 0,
      hostInterruptions: 1,
      lastError: { kind: "timeout", code: "HostInterrupted", step: "chargePayment" },
    });
    expect(recovered.lastError?.message).toContain("no failure counted");
    expect(recovered.steps.map((s) => s.status)).toEqual([
      "Completed",
      "InDoubt",
      "NotStarted",
      "NotStarted",
    ]);
    expect(recovered.compensationLog.map((e) => [e.step, e.reference])).toEqual([
      ["reserveInventory", "ref-reserveInventory"],
      ["chargePayment", null],
    ]);
  });

  it("charges interruptions past the limit like any expired attempt", () => {
    let record = claimed();
    for (let n = 1; n <= 3; n++) {
      record = apply(record, "orchestration", start(`ord-1:${n}`, "reserveInventory", record.notBefore));
      const now = addMilliseconds(record.completeBy ?? at(0), 1);
      record = apply(record, "supervisor", interrupted(`ord-1:${n}`, now, 2));
      record = apply(record, "starter", claim(record.notBefore));
    }
    // Two spared, the third charged.
    expect(record).toMatchObject({ hostInterruptions: 2, failureCount: 1 });
    expect(record.lastError?.code).toBe("AttemptExpired");
  });

  it("spares a compensation too: handed back without counting a compensation recovery, its cause kept", () => {
    let record = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    const failure = {
      kind: "permanent",
      code: "CardDeclined",
      message: "declined",
      step: "chargePayment",
    } as const;
    record = apply(record, "orchestration", {
      type: "beginCompensation",
      instanceId: "ord-1:1",
      now: at(3),
      completeBy: at(60_000),
      failure,
      undo: { callsPerRequest: 2, amplification: 1 },
    });
    const handedBack = apply(record, "supervisor", interrupted("ord-1:1", at(60_001)));
    expect(handedBack).toMatchObject({
      processState: "Compensating",
      lockedBy: null,
      compensationRecoveries: 0,
      hostInterruptions: 1,
      lastError: { code: "CardDeclined" },
    });
  });

  it("gives a still-running attempt its deadline again, a bounded number of times, then refuses", () => {
    const running = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    expectRefused(running, "supervisor", extend("ord-1:1", at(30_000), at(90_000)), "notExpired");
    expectRefused(running, "supervisor", extend("ord-1:2", at(30_001), at(90_000)), "notOwner");
    const once = apply(running, "supervisor", extend("ord-1:1", at(30_001), at(90_000)));
    expect(once).toMatchObject({ processState: "Processing", lockedBy: "ord-1:1", completeBy: at(90_000) });
    expect(once.hostInterruptions).toBe(1);
    expect(once.steps.map((s) => s.status)).toEqual(["Completed", "Running", "NotStarted", "NotStarted"]);
    const twice = apply(once, "supervisor", extend("ord-1:1", at(90_001), at(150_000)));
    expectRefused(twice, "supervisor", extend("ord-1:1", at(150_001), at(210_000)), "limitReached");
    expectRefused(running, "supervisor", extend("ord-1:1", at(30_001), at(30_001)), "notAllowed");
  });
});

describe("defer: the partner's circuit breaker is open", () => {
  const defer = (instanceId: string, step: StepName, callsMade: number, now = at(5)): Command => ({
    type: "defer",
    instanceId,
    step,
    now,
    until: at(65_000),
    callsMade,
    amplification: 1,
    reason: "the circuit breaker for chargePayment is open until the next probe",
    maxDeferralMs: 600_000,
  });

  it("ends the attempt with nothing charged when no call was made: the step as it was, its calls given back", () => {
    const before = withCompletedSteps(1);
    const running = apply(before, "orchestration", start("ord-1:1", "chargePayment"));
    expect(running.retryBudget.granted).toBeGreaterThan(before.retryBudget.granted);
    const deferred = apply(running, "orchestration", defer("ord-1:1", "chargePayment", 0));
    expect(deferred).toMatchObject({
      processState: "Pending",
      lockedBy: null,
      completeBy: null,
      notBefore: at(65_000),
      failureCount: 0,
      hostInterruptions: 0,
      lastError: { kind: "transient", code: "PartnerUnavailable", step: "chargePayment" },
    });
    expect(deferred.retryBudget.granted).toBe(before.retryBudget.granted);
    expect(deferred.steps.map((s) => s.status)).toEqual([
      "Completed",
      "NotStarted",
      "NotStarted",
      "NotStarted",
    ]);
    expect(deferred.compensationLog.map((e) => e.step)).toEqual(["reserveInventory"]);
  });

  it("leaves a step that made calls in doubt, and gives back only the calls it did not make", () => {
    const before = withCompletedSteps(1);
    const running = apply(before, "orchestration", start("ord-1:1", "chargePayment"));
    const allowance = running.steps[1]?.allowance ?? 0;
    const deferred = apply(running, "orchestration", defer("ord-1:1", "chargePayment", 1));
    expect(deferred.steps[1]?.status).toBe("InDoubt");
    expect(deferred.compensationLog.map((e) => [e.step, e.reference])).toEqual([
      ["reserveInventory", "ref-reserveInventory"],
      ["chargePayment", null],
    ]);
    expect(deferred.retryBudget.granted).toBe(running.retryBudget.granted - (allowance - 1));
  });

  it("keeps an in-doubt step in doubt even when the deferred attempt made no call", () => {
    const running = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    let record = apply(running, "supervisor", {
      type: "recover",
      expectedLockedBy: "ord-1:1",
      now: at(30_001),
      policy,
      random: () => 0.5,
    });
    record = apply(record, "starter", claim(record.notBefore));
    record = apply(record, "orchestration", start("ord-1:2", "chargePayment", record.notBefore));
    const deferred = apply(record, "orchestration", defer("ord-1:2", "chargePayment", 0, record.notBefore));
    expect(deferred.steps[1]?.status).toBe("InDoubt");
  });

  it("hands a compensation back until the probe, uncounted, keeping what it compensates for", () => {
    let record = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    const failure = {
      kind: "permanent",
      code: "CardDeclined",
      message: "declined",
      step: "chargePayment",
    } as const;
    record = apply(record, "orchestration", {
      type: "beginCompensation",
      instanceId: "ord-1:1",
      now: at(3),
      completeBy: at(60_000),
      failure,
      undo: { callsPerRequest: 2, amplification: 1 },
    });
    const granted = record.retryBudget.granted;
    const deferred = apply(record, "orchestration", defer("ord-1:1", "reserveInventory", 0));
    expect(deferred).toMatchObject({
      processState: "Compensating",
      lockedBy: null,
      notBefore: at(65_000),
      compensationRecoveries: 0,
      lastError: { code: "CardDeclined" },
    });
    expect(deferred.retryBudget.granted).toBeLessThan(granted);
  });

  it("is the owner's to make, and refuses a probe time in the past", () => {
    const running = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    expectRefused(running, "orchestration", defer("ord-1:2", "chargePayment", 0), "notOwner");
    expectRefused(
      running,
      "orchestration",
      { ...(defer("ord-1:1", "chargePayment", 0) as object), until: at(1) } as Command,
      "notAllowed",
    );
    expectRefused(running, "orchestration", defer("ord-1:1", "arrangeShipment", 0), "stepState");
  });
});

describe("F24-4: a run of deferrals has a longest wait, and progress is what ages an order", () => {
  const MAX = 600_000;
  /** A deferral at `nowMs` of the attempt that owns the record, until the probe at `untilMs`. */
  const deferAt = (record: StateRecord, nowMs: number, untilMs: number, callsMade = 0): StateRecord => {
    const step = record.steps.find((s) => s.status === "Running")?.name ?? "reserveInventory";
    return apply(record, "orchestration", {
      type: "defer",
      instanceId: record.lockedBy ?? "",
      step,
      now: at(nowMs),
      until: at(untilMs),
      callsMade,
      amplification: 1,
      reason: `the circuit breaker for ${step} is open`,
      maxDeferralMs: MAX,
    });
  };
  /** The starter claims the record at `ms` and its attempt starts the first pending step. */
  const rerun = (record: StateRecord, ms: number): StateRecord => {
    const claimedAgain = apply(record, "starter", claim(at(ms)));
    const next = claimedAgain.steps.find((s) => s.status !== "Completed")?.name ?? "reserveInventory";
    return apply(claimedAgain, "orchestration", start(claimedAgain.lockedBy ?? "", next, at(ms)));
  };

  it("counts the run from its first deferral and keeps the order's progress where it was", () => {
    const progressed = withCompletedSteps(1);
    expect(progressed.progressAt).toBe(at(2));
    let record = apply(progressed, "orchestration", start("ord-1:1", "chargePayment", at(3)));
    record = deferAt(record, 10_000, 70_000);
    expect(record).toMatchObject({ processState: "Pending", deferredSince: at(10_000), progressAt: at(2) });
    record = deferAt(rerun(record, 70_000), 70_001, 190_000);
    expect(record).toMatchObject({ processState: "Pending", deferredSince: at(10_000), progressAt: at(2) });
    expect(record.updatedAt).toBe(at(70_001));
  });

  it("parks the order in Error, PartnerUnavailable, when the next probe is past its longest deferral", () => {
    let record = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment", at(3)));
    record = deferAt(record, 10_000, 10_000 + MAX);
    expect(record.processState).toBe("Pending");
    const granted = record.retryBudget.granted;
    record = rerun(record, 10_000 + MAX);
    const parked = deferAt(record, 10_000 + MAX + 1, 10_000 + MAX + 60_000, 1);
    expect(parked).toMatchObject({
      processState: "Error",
      lockedBy: null,
      completeBy: null,
      failureCount: 0,
      deferredSince: at(10_000),
      lastError: { kind: "stalled", code: "PartnerUnavailable", step: "chargePayment" },
    });
    expect(parked.lastError?.message).toMatch(/deferred since .* past the longest deferral of 600000 ms/);
    // Invariant 7: the step that made a call may have applied its effect, so it is logged for undoing.
    expect(parked.steps.map((s) => s.status)).toEqual(["Completed", "InDoubt", "NotStarted", "NotStarted"]);
    expect(parked.compensationLog.map((e) => e.step)).toEqual(["reserveInventory", "chargePayment"]);
    expect(parked.retryBudget.granted).toBeLessThan(record.retryBudget.granted);
    expect(granted).toBeLessThan(record.retryBudget.granted);
  });

  it("ends the run when a step makes progress: the next deferral starts a new one", () => {
    let record = deferAt(
      apply(claimed(), "orchestration", start("ord-1:1", "reserveInventory")),
      10,
      500_000,
    );
    record = rerun(record, 500_000);
    record = apply(record, "orchestration", complete(record.lockedBy ?? "", "reserveInventory", at(500_001)));
    expect(record).toMatchObject({ deferredSince: null, progressAt: at(500_001) });
    record = apply(record, "orchestration", start(record.lockedBy ?? "", "chargePayment", at(500_002)));
    record = deferAt(record, 500_003, 1_000_000);
    expect(record).toMatchObject({ processState: "Pending", deferredSince: at(500_003) });
  });

  it("a permanent refusal after a deferral ends the run: the compensation counts its own", () => {
    let record = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment", at(3)));
    record = rerun(deferAt(record, 10, 65_000), 65_000);
    expect(record.deferredSince).toBe(at(10));
    const compensating = apply(record, "orchestration", {
      type: "beginCompensation",
      instanceId: "ord-1:2",
      now: at(65_001),
      completeBy: at(125_000),
      failure: { kind: "permanent", code: "CardDeclined", message: "declined", step: "chargePayment" },
      undo: { callsPerRequest: 2, amplification: 1 },
    });
    expect(compensating).toMatchObject({ processState: "Compensating", deferredSince: null });
  });

  it("an operator's resubmit starts the order again: no run of deferrals, its age from now", () => {
    let record = deferAt(
      apply(claimed(), "orchestration", start("ord-1:1", "reserveInventory")),
      10,
      MAX + 20,
    );
    expect(record.processState).toBe("Error");
    record = apply(record, "operator", { type: "resubmit", now: at(900_000), reason: "partner back" });
    expect(record).toMatchObject({ processState: "Pending", deferredSince: null, progressAt: at(900_000) });
  });

  it("ends a compensation deferred past its longest wait in CompensationFailed, naming what it compensated for", () => {
    let record = apply(withCompletedSteps(1), "orchestration", start("ord-1:1", "chargePayment"));
    record = apply(record, "orchestration", {
      type: "beginCompensation",
      instanceId: "ord-1:1",
      now: at(3),
      completeBy: at(60_000),
      failure: { kind: "permanent", code: "CardDeclined", message: "declined", step: "chargePayment" },
      undo: { callsPerRequest: 2, amplification: 1 },
    });
    const handedBack = deferAt(record, 5, 65_000);
    expect(handedBack).toMatchObject({ processState: "Compensating", deferredSince: at(5) });
    const parked = deferAt(apply(handedBack, "starter", claim(at(65_000))), 65_001, MAX + 6);
    expect(parked).toMatchObject({
      processState: "CompensationFailed",
      lockedBy: null,
      lastError: { kind: "stalled", code: "PartnerUnavailable" },
    });
    expect(parked.lastError?.message).toMatch(/compensating for CardDeclined: declined/);
    expect(parked.compensationLog.map((e) => e.step)).toEqual(["reserveInventory"]);
  });

  it("tells whether the submitter heard processing in the order's current run", () => {
    const fresh = claimed();
    expect(heardProcessing(fresh)).toBe(false);
    const deferred = deferAt(apply(fresh, "orchestration", start("ord-1:1", "reserveInventory")), 10, 65_000);
    const again = apply(deferred, "starter", claim(at(65_000)));
    expect(heardProcessing(again)).toBe(true);
    const parked = deferAt(
      apply(again, "orchestration", start("ord-1:2", "reserveInventory", at(65_001))),
      65_002,
      MAX + 20,
    );
    expect(parked.processState).toBe("Error");
    const resubmitted = apply(parked, "operator", { type: "resubmit", now: at(MAX + 30), reason: "again" });
    expect(heardProcessing(apply(resubmitted, "starter", claim(at(MAX + 30))))).toBe(false);
  });
});
