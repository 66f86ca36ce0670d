import type { OrchestrationContext, Task } from "durable-functions";
import type { AgentRequest, AgentResponse } from "../domain/agent-messages.js";
import { lateBy } from "../domain/deadline-rules.js";
import type { StepName } from "../domain/workflow.js";
import { scheduleActivity } from "./activity-contract.js";
import { type AgentAsk, agentRequestFor } from "./agent-request.js";
import { type Attempt, type DeadlinePassed, replayedNow, type StepReply } from "./order-attempt.js";
import { ORDER_ACTIVITIES } from "./order-contracts.js";

export interface StepAsk extends AgentAsk {
  /**
   * A forward step's, in an attempt whose Agent activity records its steps (`runStep`): the step to
   * start after this one, null after the last. Absent: the Agent only answers (`callAgent`).
   */
  readonly record?: { readonly next: StepName | null };
}

/**
 * Sends the Agent its request and waits for the reply or the deadline, whichever comes first; the
 * losing timer is cancelled. When the deadline won, how late its timer fired: `currentUtcDateTime` is
 * the replayed time of the episode that saw it, so this is deterministic.
 */
export function* askAgent(
  attempt: Attempt,
  ask: StepAsk,
): Generator<Task, StepReply | DeadlinePassed, unknown> {
  const { context, input } = attempt;
  const request = agentRequestFor({ ...input, instanceId: context.df.instanceId }, ask);
  const timer = context.df.createTimer(new Date(ask.completeBy));
  const reply = yield* sendToAgent(attempt, request, ask.record);
  const winner = yield context.df.Task.any([reply.task, timer]);
  if (winner !== reply.task) return deadlinePassed(context, ask.completeBy);
  timer.cancel();
  if (reply.task.isFaulted) {
    // The Agent itself broke (not the partner): like no answer, left for the Supervisor to retry.
    const error = reply.task.result;
    const message = error instanceof Error ? error.message : String(error);
    return { outcome: "failed", reference: null, fault: { kind: "transient", code: "AgentFailed", message } };
  }
  return reply.read();
}

/** The deadline won its race: how late this episode, in its replayed time, saw it. */
export function deadlinePassed(context: OrchestrationContext, deadline: string): DeadlinePassed {
  return { deadlinePassed: true, lateByMs: lateBy(deadline, replayedNow(context)) };
}

/** The Agent's reply on its way: the task to race against the deadline, and how to read what it brought. */
interface PendingReply {
  readonly task: Task;
  readonly read: () => StepReply;
}

/**
 * Sends the request the Agent's way: to the activity that also records the step (`runStep`), to the
 * activity that only answers (`callAgent`), or onto the Agent's queue, the reply then raised as an event.
 */
function* sendToAgent(
  attempt: Attempt,
  request: AgentRequest,
  record: StepAsk["record"],
): Generator<Task, PendingReply, unknown> {
  const { context, plan } = attempt;
  if (attempt.recordsInAgent && record !== undefined) {
    const run = scheduleActivity(context, ORDER_ACTIVITIES.runStep, { request, next: record.next });
    return { task: run, read: () => ({ ...run.result.reply, advanced: run.result.advanced }) };
  }
  if (plan.agentMode === "activity") {
    const call = scheduleActivity(context, ORDER_ACTIVITIES.callAgent, request);
    return { task: call, read: () => call.result };
  }
  yield* attempt.activities.sendAgentRequest(request);
  const event = context.df.waitForExternalEvent(request.replyEvent);
  // The reply handler raises the Agent's response, as the activity form returns it.
  return { task: event, read: () => event.result as AgentResponse };
}
