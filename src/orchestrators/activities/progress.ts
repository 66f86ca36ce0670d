import type { AgentRequest } from "../../domain/agent-messages.js";
import { leavesRoomToRecord, nextStepDeadline } from "../../domain/deadline-rules.js";
import type { Command } from "../../domain/transition-commands.js";
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
    advance: async (input, invocation) =>
      (await recordProgress(deps, actions, { ...input, reference: input.reference ?? null }, invocation))
        .advance,
    runStep: (input, invocation) => runAndRecord(deps, actions, input, invocation),
  };
}

/**
 * Asks the Agent for one step and, when it succeeded in time, records it and starts the next. Given a
 * `chainUntil` (version 4 on), the next step is started with the deadline `nextStepDeadline` gives
 * (domain/deadline-rules.ts), for the same activity to run it while that is the chain's.
 */
export async function runAndRecord(
  deps: OrderActivityDeps,
  actions: RecordActions,
  input: { readonly request: AgentRequest; readonly next: StepName | null; readonly chainUntil?: string },
  invocation: ActivityInvocation,
): Promise<StepRun> {
  const { request, next, chainUntil } = input;
  const reply = await deps.agent(request);
  const { stepTimeoutMs } = deps.settings;
  if (
    reply.outcome !== "succeeded" ||
    !leavesRoomToRecord(request.completeBy, actions.now(), stepTimeoutMs)
  ) {
    return { reply, advanced: null };
  }
  const completeBy = next ? nextStepDeadline(actions.now(), stepTimeoutMs, chainUntil) : null;
  const recorded = await recordProgress(
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
  // The deadline as stored: a repeated run of this activity changes nothing and keeps the first one's.
  return { reply, advanced: { ...recorded.advance, completeBy: recorded.nextCompleteBy } };
}

/** What recording a step did, and the deadline of the step it started as the record holds it. */
interface Recorded {
  readonly advance: Advance;
  readonly nextCompleteBy: string | null;
}

async function recordProgress(
  deps: OrderActivityDeps,
  actions: RecordActions,
  progress: Progress,
  invocation: ActivityInvocation,
): Promise<Recorded> {
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
  const ended = (advance: Advance): Recorded => ({ advance, nextCompleteBy: null });
  if (!outcome.ok) return ended({ ok: false, detail: outcome.reason });
  if (next) {
    const started = outcome.record.steps.find((s) => s.name === next.step);
    return {
      advance: { ok: true, next: actions.startOf(outcome, next.step) },
      nextCompleteBy: started?.completeBy ?? next.completeBy,
    };
  }
  if (outcome.laterRefusal) return ended({ ok: false, detail: outcome.laterRefusal.message });
  if (outcome.changed) {
    await actions.notify(outcome.record, "completed");
    await deps.onOrderSettled(invocation.durableClient());
  }
  return ended({ ok: true, next: { ok: false, reason: "refused", detail: "the order is processed" } });
}
