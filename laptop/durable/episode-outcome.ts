/** What an episode's replay comes to: its failure, its `continueAsNew`, and the new work to record. */
import { randomUUID } from "node:crypto";
import {
  firstMismatch,
  type HistoryEvent,
  history,
  type RecordedTask,
  type ScheduledTask,
  toPayload,
} from "./history.js";
import type { Replay } from "./sdk-replay.js";
import type { EntityRequest, InstanceRow } from "./store-records.js";

/** A sub-orchestration a replay asked for, its instance id chosen. */
export interface NewChild {
  readonly taskId: number;
  readonly name: string;
  readonly instanceId: string;
  readonly input: string | null;
}

export interface NewWork {
  /** TaskScheduled, TimerCreated and SubOrchestrationInstanceCreated events for the new tasks. */
  readonly scheduledEvents: HistoryEvent[];
  readonly activities: { taskId: number; name: string; input: string | null }[];
  readonly timers: { timerId: number; fireAt: number }[];
  readonly children: NewChild[];
  readonly entityRequests: { entityId: string; request: EntityRequest }[];
  /** Set when the new work cannot be carried out: the instance fails with this. */
  readonly failure?: string;
  /** Timers armed in an earlier episode and cancelled since; one cancelled in the episode that made it was never armed. */
  readonly canceledTimerIds: number[];
  /** The tasks the history will have scheduled: the replayed ones stand for the recorded ones (they matched). */
  readonly nowRecorded: RecordedTask[];
}

/**
 * What a replay that matched its history adds to it: the tasks past the recorded ones, and
 * cancellations. A sub-orchestration without an instance id gets the Durable Task Framework's: the
 * parent's execution id, a colon and the task's number.
 */
function newWork(
  recorded: readonly RecordedTask[],
  replayed: readonly ScheduledTask[],
  at: Date,
  caller: { readonly instanceId: string; readonly executionId: string },
): NewWork {
  const { executionId } = caller;
  const work: NewWork = {
    scheduledEvents: [],
    activities: [],
    timers: [],
    children: [],
    entityRequests: [],
    canceledTimerIds: [],
    // A session hands back the same task objects episode after episode: their entries are kept.
    nowRecorded: replayed.map((task, id) => {
      const known = recorded[id];
      return known?.task === task ? known : { id, task };
    }),
  };
  for (const [taskId, task] of replayed.entries()) {
    if (taskId < recorded.length) {
      if (isCanceledTimer(task) && !isCanceledTimer(recorded[taskId]?.task))
        work.canceledTimerIds.push(taskId);
    } else if (task.kind === "activity") {
      const input = typeof task.input === "string" ? task.input : (toPayload(task.input) ?? null);
      work.scheduledEvents.push(history.taskScheduled(at, taskId, task.name, input ?? undefined));
      work.activities.push({ taskId, name: task.name, input });
    } else if (task.kind === "subOrchestration") {
      const instanceId = task.instanceId ?? `${executionId}:${taskId}`;
      const input = toPayload(task.input) ?? null;
      work.scheduledEvents.push(
        history.subOrchestrationCreated(at, taskId, task.name, instanceId, input ?? undefined),
      );
      work.children.push({ taskId, name: task.name, instanceId, input });
    } else if (task.kind === "entity") {
      // The SDK reads the request's id from this event, and waits for an event of that name.
      const request: EntityRequest = {
        id: randomUUID(),
        operation: task.name,
        signal: task.signal,
        input: toPayload(task.input) ?? null,
        ...(task.signal ? {} : { caller: { instanceId: caller.instanceId, executionId } }),
      };
      work.scheduledEvents.push(history.eventSent(at, taskId, task.entityId, "op", JSON.stringify(request)));
      work.entityRequests.push({ entityId: task.entityId, request });
    } else if (task.retry?.expired) {
      return { ...work, failure: retryTimeoutFailure(task.retry) };
    } else {
      work.scheduledEvents.push(history.timerCreated(at, taskId, task.fireAt));
      if (!task.canceled) work.timers.push({ timerId: taskId, fireAt: task.fireAt.getTime() });
    }
  }
  return work;
}

/**
 * What a replay comes to: its failure (its own, a mismatch with the history, or new work that cannot
 * be carried out), the `continueAsNew` it ends with, and the new work to record. The last episode of
 * an execution that continues as new keeps only its signals to entities, which the extension sends
 * (an eternal orchestration's usual way); the rest of what it scheduled goes with it.
 */
export function outcomeOf(
  replay: Replay,
  recorded: readonly RecordedTask[],
  at: Date,
  instance: InstanceRow,
): { failure: string | undefined; continuing: Replay["continueAsNew"]; work: NewWork } {
  const mismatch = replay.failure === undefined ? firstMismatch(recorded, replay.tasks) : undefined;
  const checked = mismatch ? `non-deterministic orchestration: ${mismatch}` : replay.failure;
  const work = checked === undefined ? newWork(recorded, replay.tasks, at, instance) : undefined;
  const failure = checked ?? work?.failure;
  if (failure !== undefined || !work) return { failure, continuing: undefined, work: noNewWork(recorded) };
  const continuing = replay.done ? replay.continueAsNew : undefined;
  if (!continuing) return { failure, continuing, work };
  const signals = work.entityRequests.filter(({ request }) => request.signal);
  return { failure, continuing, work: { ...noNewWork(recorded), entityRequests: signals } };
}

/** A failed replay adds nothing but the failure. */
function noNewWork(recorded: readonly RecordedTask[]): NewWork {
  return {
    scheduledEvents: [],
    activities: [],
    timers: [],
    children: [],
    entityRequests: [],
    canceledTimerIds: [],
    nowRecorded: [...recorded],
  };
}

/**
 * Past a retry's timeout the extension schedules no timer, and the SDK waits for one forever: the
 * orchestration hangs, Running (azure-functions-durable-js issue 629). Failing it, saying why, is
 * the more useful thing for a runtime that tests orchestrations.
 */
function retryTimeoutFailure(retry: {
  task: string;
  failures: number;
  timeoutMs: number | undefined;
}): string {
  return (
    `${retry.task} failed ${retry.failures} time(s) and its retry timeout (${retry.timeoutMs} ms) has passed: ` +
    "the Durable Functions extension would leave this orchestration waiting forever, so this runtime fails it"
  );
}

function isCanceledTimer(task: ScheduledTask | undefined): boolean {
  return task?.kind === "timer" && task.canceled;
}
