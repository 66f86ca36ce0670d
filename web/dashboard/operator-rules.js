/*
 * Which operator commands an order's record allows, as the domain's transition table has them
 * (src/domain/transitions.ts: `resubmit` and `compensate` by the `operator`, from an unlocked record),
 * so the console offers only those and says why not of the others. A test checks this table against the
 * domain's. Pure: no DOM.
 */

/** The states each operator command may start from. */
export const OPERATOR_COMMANDS = {
  resubmit: ["Error"],
  compensate: ["Error", "CompensationFailed"],
};

const NAMES = { resubmit: "Resubmit", compensate: "Compensate" };

function listed(states) {
  return states.length === 1 ? states[0] : `${states.slice(0, -1).join(", ")} or ${states.at(-1)}`;
}

/** A step is still to undo when the compensation log names it and it is not yet Compensated. */
function somethingToUndo(record) {
  return record.compensationLog.some(
    (entry) => record.steps.find((s) => s.name === entry.step)?.status !== "Compensated",
  );
}

/**
 * For each command: `allowed`, and when not, `reason` (why the host would refuse it: the record's
 * state, a claim on it, or, for compensate, no applied step to undo).
 */
export function operatorCommands(record) {
  const answer = {};
  for (const [command, from] of Object.entries(OPERATOR_COMMANDS)) {
    let reason = null;
    if (!from.includes(record.processState)) {
      reason = `${NAMES[command]} applies to an order in ${listed(from)}; this one is ${record.processState}.`;
    } else if (record.lockedBy !== null) {
      reason = `${NAMES[command]} waits until the attempt holding the order lets it go (${record.lockedBy}).`;
    } else if (command === "compensate" && !somethingToUndo(record)) {
      reason = "Compensate has nothing to undo: no step applied its effect.";
    }
    answer[command] = reason === null ? { allowed: true } : { allowed: false, reason };
  }
  return answer;
}
