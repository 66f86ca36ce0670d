import type { Task } from "durable-functions";
import type { StepName } from "../domain/workflow.js";
import { askAgent } from "./agent-race.js";
import { type Attempt, type AttemptResult, endedBy, isDeadline, timedOut } from "./order-attempt.js";
import type { UndoStep } from "./order-contracts.js";

/** What resolving a doubt decided: undo the effect, nothing to undo, or the attempt stops here. */
export type Resolution =
  | { readonly kind: "undo"; readonly reference: string | null }
  | { readonly kind: "notApplied" }
  | { readonly kind: "stop"; readonly result: AttemptResult };

/**
 * An in-doubt step is resolved before it is undone: its request is sent again with its idempotency
 * key, so the partner answers with the effect it applied (or applies it now, once), or refuses it,
 * in which case nothing was applied and there is nothing to undo. A step not in doubt is undone as is.
 */
export function* resolveDoubt(
  attempt: Attempt,
  undo: UndoStep,
  completeBy: string,
  maxCalls: number,
): Generator<Task, Resolution, unknown> {
  if (!undo.redo) return { kind: "undo", reference: undo.reference };
  const step: StepName = undo.step;
  const reply = yield* askAgent(attempt, { step, operation: "do", completeBy, maxCalls, reference: null });
  if (isDeadline(reply)) return { kind: "stop", result: timedOut(step, reply) };
  const ended = yield* endedBy(attempt, step, reply);
  if (ended) return { kind: "stop", result: ended };
  const applied = reply.outcome === "succeeded";
  const resolved = yield* attempt.activities.resolveDoubt({
    ...attempt.ref,
    step,
    applied,
    reference: applied ? reply.reference : null,
  });
  if (!resolved.ok) return { kind: "stop", result: { outcome: "notOwner", step } };
  return applied ? { kind: "undo", reference: reply.reference } : { kind: "notApplied" };
}
