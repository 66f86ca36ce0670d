import type { OrchestrationContext, Task } from "durable-functions";
import { stepDeadline } from "../domain/deadline-rules.js";
import type { AttemptInput, WorkflowDefinition } from "../domain/workflow.js";
import { type ActivityProxy, scheduleActivity } from "./activity-contract.js";
import { deadlinePassed } from "./agent-race.js";
import { type AttemptResult, replayedNow } from "./order-attempt.js";
import {
  type AttemptRef,
  ORDER_ACTIVITIES,
  type OrderActivityContracts,
  type StartedAttempt,
} from "./order-contracts.js";

/** The attempt about to open: whose it is, its input, and the workflow version it runs. */
export interface Opening {
  readonly ref: AttemptRef;
  readonly input: AttemptInput;
  readonly workflow: WorkflowDefinition;
}

/**
 * Reads the attempt's plan, which also starts its first step. A `recordsInAgent` workflow, given the
 * step timeout, chooses the first step's deadline here and races its timer against the activity that
 * reads the plan, which also runs that step in the Agent's activity form: no activity of its own for
 * the plan. A `chainsSteps` workflow has that activity run the next steps too while each fits inside
 * this deadline (deadline-rules.ts); the plan it returns starts at the last step it ran.
 */
export function* openAttempt(
  context: OrchestrationContext,
  activities: ActivityProxy<OrderActivityContracts>,
  opening: Opening,
): Generator<Task, StartedAttempt | AttemptResult, unknown> {
  const { ref, input, workflow } = opening;
  const workflowVersion = workflow.version;
  if (
    !workflow.capabilities.recordsInAgent ||
    input.stepTimeoutMs === undefined ||
    input.firstStep === undefined
  ) {
    // The first step's deadline goes with the plan: reading the plan also starts that step.
    const plan = yield* activities.beginAttempt({
      ...ref,
      firstDeadlineFrom: replayedNow(context),
      workflowVersion,
    });
    return { plan, firstRun: null };
  }
  const firstCompleteBy = stepDeadline(replayedNow(context), input.stepTimeoutMs);
  const timer = context.df.createTimer(new Date(firstCompleteBy));
  const start = scheduleActivity(context, ORDER_ACTIVITIES.startAttempt, {
    ...ref,
    attempt: input.attempt,
    ...(input.traceparent ? { traceparent: input.traceparent } : {}),
    workflowVersion,
    firstCompleteBy,
    ...(workflow.capabilities.chainsSteps ? { chainSteps: true as const } : {}),
  });
  // Chaining, the activity may be running a later step when the timer fires: all its steps share this deadline.
  const winner = yield context.df.Task.any([start, timer]);
  const step = input.firstStep;
  if (winner !== start)
    return { outcome: "timedOut", step, lateByMs: deadlinePassed(context, firstCompleteBy).lateByMs };
  timer.cancel();
  // The activity broke (its Agent call, or the store): left for the Supervisor, like an Agent that broke.
  if (start.isFaulted) return { outcome: "gaveUp", step };
  return start.result;
}
