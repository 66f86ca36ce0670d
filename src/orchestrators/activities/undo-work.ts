import { appliedSteps, type StateRecord, stepOf } from "../../domain/state-record.js";
import type { UndoGrantRequest } from "../../domain/transition-commands.js";
import type { StepName } from "../../domain/workflow.js";
import type { UndoWork } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";

/** What each compensation attempt asks of the budget: the Agent's calls per partner request. */
export function undoGrantRequest(deps: OrderActivityDeps): UndoGrantRequest {
  return {
    callsPerRequest: deps.settings.agentCallsPerStep,
    amplification: deps.settings.agentAmplification,
  };
}

/**
 * What a compensation attempt of `record` undoes, newest first, and the calls its grant gave each
 * partner request. An in-doubt step is marked `redo`: its request is re-sent before the undo.
 */
export function undoWork(record: StateRecord): UndoWork {
  const applied = [...appliedSteps(record)].reverse();
  const inDoubt = (step: StepName) => stepOf(record, step)?.status === "InDoubt";
  return {
    toUndo: applied.map(({ step, reference }) => ({ step, reference, redo: inDoubt(step) })),
    allowance: applied[0] ? (stepOf(record, applied[0].step)?.allowance ?? 0) : 0,
  };
}
