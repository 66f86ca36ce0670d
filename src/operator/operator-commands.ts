import type { StoredStateRecord } from "../domain/state-record.js";
import { toInstant } from "../domain/time.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { StateStore } from "../ports/state-store.js";
import { updateRecord } from "../state/record-updates.js";

export type OperatorCommand = "resubmit" | "compensate";

export type OperatorOutcome =
  | { readonly ok: true; readonly record: StoredStateRecord }
  | {
      readonly ok: false;
      readonly reason: "invalid" | "notFound" | "refused" | "lostRace";
      /** Why, in words: for `refused`, the transition table's own reason. */
      readonly message: string;
    };

export interface OperatorCommandsDeps {
  readonly states: StateStore;
  readonly clock: Clock;
  readonly logger: Logger;
}

const MAX_NAME = 128;
const MAX_REASON = 1_000;

/**
 * What an operator may do to an order the system parked, as one conditional update each through the
 * transition table, recorded on the record (who, when, why, in `lastError`):
 * - `resubmit`: an `Error` order back to `Pending`; the next attempt resumes at the first step not
 *   completed, with the same idempotency keys, so the partner deduplicates whatever was applied;
 * - `compensate`: the applied steps of an `Error` or `CompensationFailed` order handed to the starter
 *   to undo, newest first.
 * Each is refused, with the reason, where it does not apply (wrong state, locked by an attempt).
 */
export function createOperatorCommands(deps: OperatorCommandsDeps) {
  const run = async (
    command: OperatorCommand,
    orderId: string,
    operator: string,
    reason: string,
  ): Promise<OperatorOutcome> => {
    const invalid = checkRequest(operator, reason);
    if (invalid) return { ok: false, reason: "invalid", message: invalid };
    const now = toInstant(deps.clock.now());
    const note = `${command} by ${operator}: ${reason}`;
    const outcome = await updateRecord(deps.states, orderId, "operator", () =>
      command === "resubmit"
        ? { type: "resubmit", now, reason: note }
        : { type: "compensate", now, reason: note },
    );
    const fields = { orderId, command, operator, reason };
    if (outcome.ok) {
      deps.logger.warn("operator.command", { ...fields, processState: outcome.record.processState });
      return { ok: true, record: outcome.record };
    }
    const message =
      outcome.reason === "refused"
        ? outcome.error.message
        : outcome.reason === "notFound"
          ? `no order ${orderId}`
          : `order ${orderId} kept changing; try again`;
    deps.logger.warn("operator.command.refused", { ...fields, refusal: outcome.reason, message });
    return { ok: false, reason: outcome.reason, message };
  };
  return {
    resubmit: (orderId: string, operator: string, reason: string) =>
      run("resubmit", orderId, operator, reason),
    compensate: (orderId: string, operator: string, reason: string) =>
      run("compensate", orderId, operator, reason),
  };
}

export type OperatorCommands = ReturnType<typeof createOperatorCommands>;

function checkRequest(operator: string, reason: string): string | undefined {
  if (operator.trim() === "" || operator.length > MAX_NAME)
    return `operator must be 1 to ${MAX_NAME} characters`;
  if (reason.trim() === "" || reason.length > MAX_REASON)
    return `reason must be 1 to ${MAX_REASON} characters`;
  return undefined;
}
