/**
 * The rows and events that link executions: a sub-orchestration and its parent, an execution and the
 * one its `continueAsNew` starts.
 */
import { randomUUID } from "node:crypto";
import type { RuntimeStatus } from "../../src/ports/durable-client.js";
import type { NewChild } from "./episode-outcome.js";
import { type FailureDetails, type HistoryEvent, history, toPayload } from "./history.js";
import type { Replay } from "./sdk-replay.js";
import type { ChildStart, EpisodeCommit, InstanceRow, ParentLink } from "./store-records.js";

/** A sub-orchestration the episode starts: a new instance linked to the task waiting for it. */
export function childStart(parent: InstanceRow, child: NewChild, at: Date): ChildStart {
  const link: ParentLink = {
    instanceId: parent.instanceId,
    executionId: parent.executionId,
    taskId: child.taskId,
  };
  return {
    row: {
      instanceId: child.instanceId,
      executionId: randomUUID(),
      name: child.name,
      status: "Pending",
      input: child.input,
      output: null,
      failure: null,
      customStatus: null,
      createdAt: at.getTime(),
      updatedAt: at.getTime(),
      parent: link,
    },
    started: history.executionStarted(at, child.name, child.input ?? undefined),
    refused: history.subOrchestrationFailed(at, child.taskId, {
      ErrorType: "InstanceAlreadyRunning",
      ErrorMessage: `sub-orchestration ${child.name} was not started: instance ${child.instanceId} is already running`,
    }),
  };
}

/** The execution a `continueAsNew` starts: same instance (and parent), new input, fresh history. */
export function nextExecution(
  instance: InstanceRow,
  input: unknown,
  at: Date,
): { row: InstanceRow; started: HistoryEvent } {
  const payload = (typeof input === "string" ? input : toPayload(input)) ?? null;
  return {
    row: {
      ...instance,
      executionId: randomUUID(),
      status: "Pending",
      input: payload,
      output: null,
      failure: null,
      customStatus: null,
      updatedAt: at.getTime(),
    },
    started: history.executionStarted(at, instance.name, payload ?? undefined),
  };
}

/** How an execution's end reaches further: a sub-orchestration's parent is told, a `continueAsNew` starts the next. */
export function ending(
  instance: InstanceRow,
  status: RuntimeStatus,
  result: string | undefined,
  continuing: Replay["continueAsNew"],
  at: Date,
): Pick<EpisodeCommit, "toParent" | "continueAsNew"> {
  if (continuing) return { continueAsNew: nextExecution(instance, continuing.input, at) };
  if (!instance.parent || (status !== "Completed" && status !== "Failed")) return {};
  return {
    toParent: { link: instance.parent, event: parentEvent(instance, instance.parent, status, result, at) },
  };
}

/** What a finished sub-orchestration's parent records: the child's result, or why it failed. */
export function parentEvent(
  child: InstanceRow,
  link: ParentLink,
  status: "Completed" | "Failed",
  result: string | undefined,
  at: Date,
): HistoryEvent {
  return status === "Completed"
    ? history.subOrchestrationCompleted(at, link.taskId, result ?? "null")
    : history.subOrchestrationFailed(at, link.taskId, childFailure(child, `failed: ${result ?? ""}`));
}

export function childFailure(child: InstanceRow, what: string): FailureDetails {
  return {
    ErrorType: "SubOrchestrationFailed",
    ErrorMessage: `sub-orchestration ${child.name} (instance ${child.instanceId}) ${what}`,
  };
}
