/**
 * The console's rule for which operator commands an order allows (web/dashboard/operator-rules.js)
 * against the domain's: its table of from-states is the transition table's, and on records of every
 * state, claimed or not, with steps to undo or none, it allows exactly what `applyTransition` accepts.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { applyTransition } from "../../src/domain/apply-transition.js";
import { PROCESS_STATES, type StateRecord } from "../../src/domain/state-record.js";
import { TRANSITIONS } from "../../src/domain/transition-table.js";
import { pendingRecord, T0 } from "../support/records.js";

type Command = "resubmit" | "compensate";
interface OperatorRulesModule {
  OPERATOR_COMMANDS: Record<Command, string[]>;
  operatorCommands(record: StateRecord): Record<Command, { allowed: boolean; reason?: string }>;
}

const modulePath = pathToFileURL(join(import.meta.dirname, "../../web/dashboard/operator-rules.js")).href;
const { OPERATOR_COMMANDS, operatorCommands } = (await import(modulePath)) as OperatorRulesModule;
const COMMANDS: readonly Command[] = ["resubmit", "compensate"];

/** Records of a state: unclaimed or claimed, with nothing applied, a step to undo, or all undone. */
function recordsIn(state: (typeof PROCESS_STATES)[number]): StateRecord[] {
  const base = pendingRecord("ord-rules", { processState: state });
  const entry = {
    sequence: 1,
    step: "reserveInventory" as const,
    idempotencyKey: "ord-rules:reserveInventory",
    reference: "ref-1",
    recordedAt: T0,
  };
  const withStep = (status: "Completed" | "Compensated"): StateRecord => ({
    ...base,
    steps: base.steps.map((s) => (s.name === "reserveInventory" ? { ...s, status } : s)),
    compensationLog: [entry],
  });
  const variants = [base, withStep("Completed"), withStep("Compensated")];
  return [
    ...variants,
    ...variants.map((r) => ({ ...r, lockedBy: "ord-rules:1", completeBy: "2026-01-01T00:05:00.000Z" })),
  ];
}

describe("F27-4: the console offers the operator commands the transition table allows", () => {
  it("starts each command from the states the domain's table names for the operator", () => {
    for (const command of COMMANDS) {
      const from = TRANSITIONS.filter((r) => r.command === command && r.actor === "operator").map(
        (r) => r.from,
      );
      expect(OPERATOR_COMMANDS[command], command).toEqual(from);
      expect(
        TRANSITIONS.filter((r) => r.command === command).every((r) => r.fence === "unlocked"),
        `${command} is refused on a claimed record`,
      ).toBe(true);
    }
  });

  it("allows a command on a record exactly when the domain would apply it, and says why not otherwise", () => {
    let checked = 0;
    for (const state of PROCESS_STATES) {
      for (const record of recordsIn(state)) {
        const offered = operatorCommands(record);
        for (const command of COMMANDS) {
          const applied = applyTransition(record, "operator", { type: command, now: T0, reason: "test" });
          const what = `${command} on ${state}${record.lockedBy ? ", claimed" : ""}, log ${record.compensationLog.length}`;
          expect(offered[command].allowed, what).toBe(applied.ok);
          if (!offered[command].allowed) expect(offered[command].reason, what).toMatch(/\.$/);
          checked += 1;
        }
      }
    }
    expect(checked).toBe(PROCESS_STATES.length * 6 * COMMANDS.length);
  });
});
