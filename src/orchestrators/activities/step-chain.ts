import { leavesRoomToChain } from "../../domain/deadline-rules.js";
import type { ActivityInvocation } from "../activity-contract.js";
import { agentRequestFor } from "../agent-request.js";
import type { CompletedStep, ForwardPlan, StartedAttempt, StepRun, StepStart } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";
import { runAndRecord } from "./progress.js";
import type { RecordActions } from "./record-actions.js";

/** An attempt whose first step the activity has run, as `startAttempt` has it. */
interface FirstStepRun {
  readonly input: { readonly orderId: string; readonly attempt: number; readonly instanceId: string };
  readonly plan: ForwardPlan;
  readonly firstRun: StepRun;
}

/**
 * Version 4 on: runs the steps after the first in the same activity while each one was started with
 * the first step's deadline (`runAndRecord` starts it so only with enough of that deadline left), the
 * deadline the orchestration's timer races this activity at, and half a step timeout is still left
 * when its call would begin. Each step is still recorded as started
 * before its call and as completed after it, with its own allowance and idempotency key, so the record,
 * the Supervisor and a repeated run see what they see of a step run in an activity of its own. The
 * chain stops at a step that did not succeed in time, at a next step not started (budget spent,
 * ownership lost) or started with a deadline of its own, with too little time left, and after the
 * last step; the plan answered starts at the last step run, with the steps completed
 * on the way added to `completed`, so the orchestration goes on from there as after the first step.
 */
export async function runStepChain(
  deps: OrderActivityDeps,
  actions: RecordActions,
  chain: FirstStepRun,
  invocation: ActivityInvocation,
): Promise<StartedAttempt> {
  const { input, plan } = chain;
  const chainUntil = plan.firstCompleteBy;
  const chained: CompletedStep[] = [];
  let run = chain.firstRun;
  let start: StepStart = plan.firstStart;
  let at = 0;
  for (;;) {
    const [done, step] = [plan.pendingSteps[at], plan.pendingSteps[at + 1]];
    const advanced = run.advanced;
    if (!done || !step || !advanced?.ok || !advanced.next.ok || advanced.completeBy !== chainUntil) break;
    // The step's record write may have been slow: its call too needs half a step timeout left.
    if (!leavesRoomToChain(chainUntil, actions.now(), deps.settings.stepTimeoutMs)) break;
    chained.push({ step: done, reference: run.reply.reference });
    start = advanced.next;
    at++;
    const request = agentRequestFor(input, {
      step,
      operation: "do",
      completeBy: chainUntil,
      maxCalls: advanced.next.allowance,
      reference: null,
    });
    const next = plan.pendingSteps[at + 1] ?? null;
    run = await runAndRecord(deps, actions, { request, next, chainUntil }, invocation);
  }
  if (at === 0) return { plan, firstRun: run };
  return {
    plan: {
      ...plan,
      pendingSteps: plan.pendingSteps.slice(at),
      completed: [...plan.completed, ...chained],
      firstStart: start,
    },
    firstRun: run,
  };
}
