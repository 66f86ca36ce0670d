import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyTransition } from "../../src/domain/apply-transition.js";
import { seededRandom } from "../../src/domain/backoff.js";
import { nextToCompensate } from "../../src/domain/record-changes.js";
import {
  PROCESS_STATES,
  type ProcessState,
  type StateRecord,
  TERMINAL_STATES,
} from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import { ACTORS, type Actor, type Command, type CommandType } from "../../src/domain/transition-commands.js";
import { findRule, STEP_TRANSITIONS } from "../../src/domain/transition-table.js";
import { instanceIdFor, ORDER_STEPS } from "../../src/domain/workflow.js";
import { pendingRecord, RECOVERY_POLICY, T0 } from "../support/records.js";

const NUM_RUNS = 1_000;
const policy = RECOVERY_POLICY;

const COMMAND_TYPES: readonly CommandType[] = [
  "claim",
  "releaseClaim",
  "startStep",
  "completeStep",
  "finish",
  "fail",
  "beginCompensation",
  "resumeCompensation",
  "resolveDoubt",
  "compensateStep",
  "finishCompensation",
  "recover",
  "extendDeadline",
  "defer",
  "resubmit",
  "compensate",
];

/**
 * One actor's step: it acts on the record as it read it some writes ago (`staleness`), naming an
 * instance id that may or may not be the owner's, a step that may or may not be the right one.
 */
interface Operation {
  readonly actor: Actor | "natural";
  /** `sensible`: a command that fits the state the actor saw; otherwise any command at all. */
  readonly command: CommandType | "sensible";
  readonly staleness: number;
  readonly claimant: "owner" | "previous" | "next" | "stranger";
  readonly stepPick: "expected" | number;
  readonly outcome: "compensated" | "failed";
  readonly advanceMs: number;
  readonly seed: number;
}

const operation: fc.Arbitrary<Operation> = fc.record({
  // Weighted towards fitting commands by their own actors, so runs get deep into the state machine.
  actor: fc.oneof(fc.constant("natural" as const), fc.constantFrom(...ACTORS)),
  command: fc.oneof(
    { weight: 3, arbitrary: fc.constant("sensible" as const) },
    { weight: 1, arbitrary: fc.constantFrom(...COMMAND_TYPES) },
  ),
  staleness: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 4 })),
  claimant: fc.oneof(fc.constant("owner" as const), fc.constantFrom("owner", "previous", "next", "stranger")),
  stepPick: fc.oneof(fc.constant("expected" as const), fc.integer({ min: 0, max: ORDER_STEPS.length - 1 })),
  outcome: fc.constantFrom("compensated", "failed"),
  advanceMs: fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 120_000 })),
  seed: fc.integer(),
});

function naturalActor(command: CommandType): Actor {
  if (command === "claim" || command === "releaseClaim") return "starter";
  if (command === "recover" || command === "extendDeadline") return "supervisor";
  if (command === "resubmit" || command === "compensate") return "operator";
  return "orchestration";
}

function sensibleCommand(seen: StateRecord, pick: number): CommandType {
  const choose = (...options: CommandType[]) => options[Math.abs(pick) % options.length] as CommandType;
  switch (seen.processState) {
    case "Pending":
      return "claim";
    case "Processing": {
      const next = seen.steps.find((s) => s.status !== "Completed");
      if (!next) return choose("finish", "finish", "recover");
      if (next.status === "Running")
        return choose(
          "completeStep",
          "completeStep",
          "fail",
          "beginCompensation",
          "recover",
          "extendDeadline",
          "defer",
        );
      return choose("startStep", "startStep", "recover", "releaseClaim");
    }
    case "Compensating": {
      if (seen.lockedBy === null) return "claim";
      const next = nextToCompensate(seen);
      if (next && seen.steps.find((s) => s.name === next.step)?.status === "InDoubt")
        return choose("resolveDoubt", "resumeCompensation", "recover");
      return choose(
        "compensateStep",
        "compensateStep",
        "resumeCompensation",
        "finishCompensation",
        "recover",
      );
    }
    case "Error":
      return choose("resubmit", "compensate");
    default:
      return choose(...COMMAND_TYPES);
  }
}

function commandFor(op: Operation, seen: StateRecord, now: string): Command {
  const type = op.command === "sensible" ? sensibleCommand(seen, op.seed) : op.command;
  const owner = seen.lockedBy ?? instanceIdFor(seen.orderId, seen.attempt);
  const instanceId = {
    owner,
    previous: instanceIdFor(seen.orderId, seen.attempt - 1),
    next: instanceIdFor(seen.orderId, seen.attempt + 1),
    stranger: "someone-else:1",
  }[op.claimant];
  const expectedStep =
    type === "compensateStep" || type === "resolveDoubt"
      ? (nextToCompensate(seen)?.step ?? ORDER_STEPS[0])
      : (seen.steps.find((s) => s.status !== "Completed")?.name ?? ORDER_STEPS[0]);
  const step = op.stepPick === "expected" ? expectedStep : (ORDER_STEPS[op.stepPick] ?? ORDER_STEPS[0]);
  const failure = { kind: "permanent", code: "Refused", message: "refused", step } as const;
  switch (type) {
    case "claim":
      return { type: "claim", now, attemptTimeoutMs: 60_000 };
    case "releaseClaim":
      return { type: "releaseClaim", instanceId, now, retryAt: now, reason: "start failed" };
    case "startStep":
      return {
        type: "startStep",
        instanceId,
        step,
        now,
        completeBy: addMilliseconds(now, 30_000),
        requestedCalls: 3,
        amplification: 1,
      };
    case "completeStep":
      return { type: "completeStep", instanceId, step, now, reference: `ref-${step}` };
    case "finish":
      return { type: "finish", instanceId, now };
    case "fail":
      return { type: "fail", instanceId, now, failure };
    case "beginCompensation":
      return {
        type: "beginCompensation",
        instanceId,
        now,
        completeBy: addMilliseconds(now, 30_000),
        failure,
        undo: { callsPerRequest: 2, amplification: 1 },
      };
    case "resumeCompensation":
      return { type: "resumeCompensation", instanceId, now, undo: { callsPerRequest: 2, amplification: 1 } };
    case "resolveDoubt": {
      const applied = op.outcome === "compensated";
      return {
        type: "resolveDoubt",
        instanceId,
        step,
        now,
        applied,
        reference: applied ? `ref-${step}` : null,
      };
    }
    case "compensateStep":
      return { type: "compensateStep", instanceId, step, now, outcome: op.outcome };
    case "finishCompensation":
      return { type: "finishCompensation", instanceId, now };
    case "recover":
      return {
        type: "recover",
        expectedLockedBy: instanceId,
        now,
        policy: op.seed % 2 === 0 ? policy : { ...policy, onExhausted: "compensate" },
        random: seededRandom(op.seed),
        // A third of the recoveries are the host's fault, not the order's.
        ...(op.seed % 3 === 0 ? { interruption: "its host was down" } : {}),
      };
    case "defer":
      return {
        type: "defer",
        instanceId,
        step,
        now,
        until: addMilliseconds(now, 5_000),
        callsMade: Math.abs(op.seed) % 3,
        amplification: 1,
        reason: "the partner's circuit breaker is open",
        // Some runs of deferrals end parked for an operator: at once, or after a few.
        maxDeferralMs: (Math.abs(op.seed) % 3) * 10_000,
      };
    case "extendDeadline":
      return {
        type: "extendDeadline",
        expectedLockedBy: instanceId,
        now,
        completeBy: addMilliseconds(now, 60_000),
        reason: "its orchestration is still running",
        policy: { ...policy, maxHostInterruptions: 3 },
      };
    case "resubmit":
      return { type: "resubmit", now, reason: "operator resubmission" };
    case "compensate":
      return { type: "compensate", now, reason: "operator compensation" };
  }
}

/** Structural truths that must hold for every record any sequence of operations can produce. */
function checkRecordInvariants(record: StateRecord): void {
  // A compensation handed back for another attempt is Compensating and unlocked until it is claimed.
  const owned =
    record.processState === "Processing" ||
    (record.processState === "Compensating" && record.lockedBy !== null);
  if (owned) {
    expect(record.lockedBy).toBe(instanceIdFor(record.orderId, record.attempt));
    expect(record.completeBy).not.toBeNull();
  } else {
    expect(record.lockedBy).toBeNull();
    expect(record.completeBy).toBeNull();
  }
  if (record.processState === "Processed")
    expect(record.steps.every((s) => s.status === "Completed")).toBe(true);
  if (record.processState === "Compensated") {
    for (const entry of record.compensationLog) {
      expect(record.steps.find((s) => s.name === entry.step)?.status).toBe("Compensated");
    }
  }
  // Invariant 4 of docs/architecture.md: past the limit only Error, or what an operator chose to do from Error.
  if (record.failureCount > policy.maxRecoveries) {
    expect(["Error", "Compensating", "Compensated", "CompensationFailed"]).toContain(record.processState);
  }
  expect(record.retryBudget.granted).toBeLessThanOrEqual(record.retryBudget.limit);
  // The compensation log is ordered, one entry per step that completed or is in doubt, and only such steps.
  expect(record.compensationLog.map((e) => e.sequence)).toEqual(record.compensationLog.map((_, i) => i + 1));
  const logged = record.compensationLog.map((e) => e.step);
  expect(new Set(logged).size).toBe(logged.length);
  for (const step of record.steps) {
    const mayBeApplied = ["InDoubt", "Completed", "Compensated", "CompensationFailed"].includes(step.status);
    // A step retried after a doubt runs with its entry kept: it may still have applied its effect.
    if (step.status !== "Running") expect(logged.includes(step.name)).toBe(mayBeApplied);
    if (step.status === "InDoubt")
      expect(record.compensationLog.find((e) => e.step === step.name)?.reference).toBeNull();
  }
  // Steps complete in workflow order.
  const completedIndexes = record.steps.flatMap((s, i) => (logged.includes(s.name) ? [i] : []));
  expect(completedIndexes).toEqual(completedIndexes.map((_, i) => i));
}

/** Did the actor own the record it wrote over, by the table's fence? */
function fenceHeld(before: StateRecord, command: Command, fence: string): boolean {
  if (fence === "unlocked") return before.lockedBy === null;
  if (fence === "owner") return "instanceId" in command && before.lockedBy === command.instanceId;
  return (
    (command.type === "recover" || command.type === "extendDeadline") &&
    before.lockedBy === command.expectedLockedBy &&
    before.completeBy !== null &&
    before.completeBy <= command.now
  );
}

interface RunStats {
  readonly reached: Set<ProcessState>;
  committed: number;
}

/** Plays the operations against one record in a store with ETags, as concurrent actors would. */
function play(ops: readonly Operation[], stats: RunStats, useNaturalActor: boolean): void {
  const versions: StateRecord[] = [
    pendingRecord("ord-p", { retryBudget: { limit: 20, granted: 0, undoReserve: 6 } }),
  ];
  let clock = Date.parse(T0);
  for (const op of ops) {
    clock += op.advanceMs;
    const now = new Date(clock).toISOString();
    const current = versions[versions.length - 1] as StateRecord;
    const seen = versions[Math.max(0, versions.length - 1 - op.staleness)] as StateRecord;
    const command = commandFor(op, seen, now);
    const actor = useNaturalActor || op.actor === "natural" ? naturalActor(command.type) : op.actor;
    const result = applyTransition(seen, actor, command);
    if (!result.ok) {
      expect(result.error.message).toContain(result.error.code === "notAllowed" ? "table" : "");
      continue;
    }
    const { record: after, changed, rule } = result.value;
    if (!changed) {
      expect(after).toBe(seen);
      continue;
    }
    // The store's conditional update: only a writer that read the current version may write.
    if (seen !== current) continue;
    expect(findRule(command.type, actor, seen.processState)).toBe(rule);
    expect(rule.to).toContain(after.processState);
    expect(fenceHeld(seen, command, rule.fence)).toBe(true);
    for (const [i, step] of after.steps.entries()) {
      const was = seen.steps[i]?.status ?? "NotStarted";
      if (was !== step.status) expect(STEP_TRANSITIONS[was]).toContain(step.status);
    }
    if (after.failureCount > policy.maxRecoveries && seen.failureCount <= policy.maxRecoveries) {
      const compensates = command.type === "recover" && command.policy.onExhausted === "compensate";
      expect(after.processState).toBe(compensates && nextToCompensate(after) ? "Compensating" : "Error");
    }
    if (command.type === "fail") expect(seen.steps.some((s) => s.status === "Completed")).toBe(false);
    checkRecordInvariants(after);
    // The history is written by the same update: its last entry is this very transition.
    expect(after.history.at(-1)).toMatchObject({
      actor,
      command: command.type,
      from: seen.processState,
      to: after.processState,
      attempt: after.attempt,
    });
    expect(after.history.length + (after.historySummary?.entries ?? 0)).toBe(
      seen.history.length + (seen.historySummary?.entries ?? 0) + 1,
    );
    versions.push(after);
    stats.reached.add(after.processState);
    stats.committed++;
  }
}

describe("transition table under arbitrary interleavings", () => {
  it("no sequence of operations by any actors reaches a forbidden state or moves a record its actor does not own", () => {
    const stats: RunStats = { reached: new Set(), committed: 0 };
    fc.assert(
      fc.property(fc.array(operation, { minLength: 1, maxLength: 60, size: "large" }), (ops) =>
        play(ops, stats, false),
      ),
      { numRuns: NUM_RUNS },
    );
    expect(stats.committed).toBeGreaterThan(NUM_RUNS);
  });

  it("with every actor doing its own job, runs reach every process state and hold the same invariants", () => {
    const stats: RunStats = { reached: new Set(), committed: 0 };
    // Processed needs every step completed with no fault or recovery between, which random runs seldom
    // draw (a round of them missed it once in CI): more rounds until every state was reached, up to a
    // bound, so that an unlucky draw is not read as a weak generator.
    for (let round = 0; round < 5 && stats.reached.size < PROCESS_STATES.length; round++) {
      fc.assert(
        fc.property(fc.array(operation, { minLength: 30, maxLength: 80 }), (ops) => play(ops, stats, true)),
        { numRuns: NUM_RUNS },
      );
    }
    // A generator too weak to reach a state would let the invariants pass vacuously.
    expect([...stats.reached].sort()).toEqual([...PROCESS_STATES].sort());
    expect(TERMINAL_STATES.every((s) => stats.reached.has(s))).toBe(true);
  });

  it("an actor that is not the owner is refused, whatever it asks", () => {
    fc.assert(
      fc.property(operation, fc.integer({ min: 0, max: 3 }), (op, claims) => {
        let record = pendingRecord("ord-q");
        for (let i = 0; i < claims; i++) {
          const claimed = applyTransition(record, "starter", { type: "claim", now: T0, attemptTimeoutMs: 1 });
          if (claimed.ok) record = claimed.value.record;
          const recovered = applyTransition(record, "supervisor", {
            type: "recover",
            expectedLockedBy: record.lockedBy ?? "",
            now: addMilliseconds(T0, 1),
            policy,
            random: () => 0,
          });
          if (recovered.ok && i < claims - 1) record = recovered.value.record;
        }
        const stranger: Operation = { ...op, claimant: op.claimant === "owner" ? "stranger" : op.claimant };
        const command = commandFor(stranger, record, addMilliseconds(T0, 2));
        if (!("instanceId" in command)) return;
        const result = applyTransition(record, "orchestration", command);
        expect(result.ok).toBe(false);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
