import type { AgentRequest } from "../../domain/agent-messages.js";
import { addMilliseconds } from "../../domain/time.js";
import type { Command } from "../../domain/transitions.js";
import type { StepName } from "../../domain/workflow.js";
import type { ActivityImplementations, ActivityInvocation } from "../activity-contract.js";
import type { Advance, AttemptRef, OrderActivityContracts, StepRun } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import type { RecordActions } from "./record-actions.js";

/** A completed step (or none) to record, and the step to start after it (or none: the order is done). */
interface Progress extends AttemptRef {
  readonly step: StepName | null;
  readonly reference: string | null;
  readonly next: { readonly step: StepName; readonly completeBy: string } | null;
}

/**
 * `advance`: one update records a completed step and starts the next, or finishes the order.
 * `runStep`: the Agent's call and that update in one activity, so a step costs one activity.
 */
export function createProgressActivities(
  deps: OrderActivityDeps,
  actions: RecordActions,
): Pick<ActivityImplementations<OrderActivityContracts>, "advance" | "runStep"> {
  return {
    advance: (input, invocation) =>
      recordProgress(deps, actions, { ...input, reference: input.reference ?? null }, invocation),
    runStep: (input, invocation) => runAndRecord(deps, actions, input, invocation),
  };
}

/** Asks the Agent for one step and, when it succeeded in time, records it and starts the next. */
export async function runAndRecord(
  deps: OrderActivityDeps,
  actions: RecordActions,
  input: { readonly request: AgentRequest; readonly next: StepName | null },
  invocation: ActivityInvocation,
): Promise<StepRun> {
  const { request, next } = input;
  const reply = await deps.agent(request);
  if (reply.outcome !== "succeeded" || !beforeDeadline(actions.now(), request)) {
    return { reply, advanced: null };
  }
  const completeBy = next ? addMilliseconds(actions.now(), deps.settings.stepTimeoutMs) : null;
  const advanced = await recordProgress(
    deps,
    actions,
    {
      orderId: request.orderId,
      instanceId: request.instanceId,
      step: request.step,
      reference: reply.reference,
      next: next && completeBy ? { step: next, completeBy } : null,
    },
    invocation,
  );
  return { reply, advanced: { ...advanced, completeBy } };
}

/**
 * A reply that comes after its step's deadline is not recorded here: the orchestration may already
 * have seen the deadline pass and left the order to the Supervisor, which then finds the step in doubt.
 */
function beforeDeadline(now: string, request: AgentRequest): boolean {
  return Date.parse(now) < Date.parse(request.completeBy);
}

async function recordProgress(
  deps: OrderActivityDeps,
  actions: RecordActions,
  progress: Progress,
  invocation: ActivityInvocation,
): Promise<Advance> {
  const { step, next, reference } = progress;
  const complete: Command[] = step
    ? [{ type: "completeStep", instanceId: progress.instanceId, step, now: actions.now(), reference }]
    : [];
  const then: Command = next
    ? actions.startStep(progress, next.step, next.completeBy)
    : { type: "finish", instanceId: progress.instanceId, now: actions.now() };
  const outcome = await actions.apply(
    progress,
    () => [...complete, then],
    next ? "step.advanced" : "order.processed",
    { step, reference, next: next?.step ?? null },
  );
  if (!outcome.ok) return { ok: false, detail: outcome.reason };
  if (next) return { ok: true, next: actions.startOf(outcome, next.step) };
  if (outcome.laterRefusal) return { ok: false, detail: outcome.laterRefusal.message };
  if (outcome.changed) {
    await actions.notify(outcome.record, "completed");
    await deps.onOrderSettled(invocation.durableClient());
  }
  return { ok: true, next: { ok: false, reason: "refused", detail: "the order is processed" } };
}
