/**
 * History events in the shape the Durable Functions extension hands to the Node.js SDK (the fields the
 * SDK's replay executor reads), and the SDK's actions as this runtime reads them back.
 */
export const EventType = {
  ExecutionStarted: 0,
  ExecutionCompleted: 1,
  ExecutionFailed: 2,
  ExecutionTerminated: 3,
  TaskScheduled: 4,
  TaskCompleted: 5,
  TaskFailed: 6,
  SubOrchestrationInstanceCreated: 7,
  SubOrchestrationInstanceCompleted: 8,
  SubOrchestrationInstanceFailed: 9,
  TimerCreated: 10,
  TimerFired: 11,
  OrchestratorStarted: 12,
  OrchestratorCompleted: 13,
  EventSent: 14,
  EventRaised: 15,
} as const;

export const ActionType = {
  CallActivity: 0,
  CallActivityWithRetry: 1,
  CallSubOrchestrator: 2,
  CallSubOrchestratorWithRetry: 3,
  ContinueAsNew: 4,
  CreateTimer: 5,
  WaitForExternalEvent: 6,
  CallEntity: 7,
  CallHttp: 8,
  SignalEntity: 9,
  WhenAny: 11,
  WhenAll: 12,
  LockEntities: 13,
  ReleaseEntities: 14,
} as const;

export interface HistoryEvent {
  readonly EventType: number;
  readonly EventId: number;
  readonly IsPlayed: boolean;
  readonly Timestamp: string;
  readonly [field: string]: unknown;
}

export interface FailureDetails {
  readonly ErrorType: string;
  readonly ErrorMessage: string;
  readonly StackTrace?: string;
}

function event(type: number, at: Date, fields: Record<string, unknown> = {}, eventId = -1): HistoryEvent {
  return { EventType: type, EventId: eventId, IsPlayed: false, Timestamp: timestampOf(at), ...fields };
}

/** The last time written as a timestamp: an episode stamps all its events with one `Date`. */
const lastTimestamp = { at: undefined as Date | undefined, time: Number.NaN, iso: "" };

/** `at.toISOString()`, worked out once for the several events an episode stamps with the same time. */
function timestampOf(at: Date): string {
  const time = at.getTime();
  // A Date can be changed in place: the time is compared too, not only the object.
  if (at === lastTimestamp.at && time === lastTimestamp.time) return lastTimestamp.iso;
  const iso = at.toISOString();
  lastTimestamp.at = at;
  lastTimestamp.time = time;
  lastTimestamp.iso = iso;
  return iso;
}

/** A task's failure, in the fields the SDK reads: the details, and the older reason and details strings. */
function failed(type: number, at: Date, taskId: number, failure: FailureDetails): HistoryEvent {
  return event(type, at, {
    TaskScheduledId: taskId,
    Reason: failure.ErrorMessage,
    Details: failure.StackTrace ?? "",
    FailureDetails: failure,
  });
}

/** JSON as the extension carries payloads: a string, or absent for `undefined`. */
export function toPayload(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

export const history = {
  orchestratorStarted: (at: Date) => event(EventType.OrchestratorStarted, at),
  orchestratorCompleted: (at: Date) => event(EventType.OrchestratorCompleted, at),
  executionStarted: (at: Date, name: string, input: string | undefined) =>
    event(EventType.ExecutionStarted, at, { Name: name, Input: input }),
  executionCompleted: (at: Date, status: "Completed" | "Failed", result: string | undefined) =>
    event(EventType.ExecutionCompleted, at, { OrchestrationStatus: status, Result: result }),
  taskScheduled: (at: Date, taskId: number, name: string, input: string | undefined) =>
    event(EventType.TaskScheduled, at, { Name: name, Input: input }, taskId),
  taskCompleted: (at: Date, taskId: number, result: string | undefined) =>
    event(EventType.TaskCompleted, at, { TaskScheduledId: taskId, Result: result }),
  taskFailed: (at: Date, taskId: number, failure: FailureDetails) =>
    failed(EventType.TaskFailed, at, taskId, failure),
  subOrchestrationCreated: (
    at: Date,
    taskId: number,
    name: string,
    instanceId: string,
    input: string | undefined,
  ) =>
    event(
      EventType.SubOrchestrationInstanceCreated,
      at,
      { Name: name, InstanceId: instanceId, Input: input },
      taskId,
    ),
  subOrchestrationCompleted: (at: Date, taskId: number, result: string | undefined) =>
    event(EventType.SubOrchestrationInstanceCompleted, at, { TaskScheduledId: taskId, Result: result }),
  subOrchestrationFailed: (at: Date, taskId: number, failure: FailureDetails) =>
    failed(EventType.SubOrchestrationInstanceFailed, at, taskId, failure),
  /** A message to an entity: `instanceId` is its scheduler id (`@name@key`), `input` the request. */
  eventSent: (at: Date, taskId: number, instanceId: string, name: string, input: string) =>
    event(EventType.EventSent, at, { InstanceId: instanceId, Name: name, Input: input }, taskId),
  timerCreated: (at: Date, timerId: number, fireAt: Date) =>
    event(EventType.TimerCreated, at, { FireAt: fireAt.toISOString() }, timerId),
  timerFired: (at: Date, timerId: number, fireAt: Date) =>
    event(EventType.TimerFired, at, { TimerId: timerId, FireAt: fireAt.toISOString() }),
  eventRaised: (at: Date, name: string, input: string | undefined) =>
    event(EventType.EventRaised, at, { Name: name, Input: input }),
};

export function failureDetailsOf(error: unknown): FailureDetails {
  if (error instanceof Error) {
    return {
      ErrorType: error.name,
      ErrorMessage: error.message,
      ...(error.stack ? { StackTrace: error.stack } : {}),
    };
  }
  return { ErrorType: "Error", ErrorMessage: String(error) };
}

/**
 * One unit of work an orchestrator asked for, in the order the extension numbers them. A task with
 * retries is one of these per attempt, and a timer with `retry` between each failed attempt and the next.
 */
export type ScheduledTask =
  | { readonly kind: "activity"; readonly name: string; readonly input: unknown }
  | {
      readonly kind: "subOrchestration";
      readonly name: string;
      readonly input: unknown;
      /** As the orchestrator gave it; undefined: the runtime makes one up. */
      readonly instanceId: string | undefined;
    }
  | {
      /** An operation on a durable entity: `name` is the operation, `entityId` the scheduler id. */
      readonly kind: "entity";
      readonly name: string;
      readonly entityId: string;
      readonly input: unknown;
      /** A signal (`signalEntity`) wants no answer; a call (`callEntity`) waits for one. */
      readonly signal: boolean;
    }
  | {
      readonly kind: "timer";
      readonly fireAt: Date;
      readonly canceled: boolean;
      /** `expired`: the retry timeout has passed, so the extension would schedule no such timer. */
      readonly retry?: {
        /** The activity or orchestration being retried. */
        readonly task: string;
        readonly failures: number;
        readonly timeoutMs: number | undefined;
        readonly expired: boolean;
      };
    };

interface SdkAction {
  readonly actionType: number;
  readonly input?: unknown;
  readonly compoundActions?: readonly SdkAction[];
}

export class UnsupportedActionError extends Error {
  override readonly name = "UnsupportedActionError";
  constructor(readonly actionType: number) {
    const known = Object.entries(ActionType).find(([, n]) => n === actionType)?.[0] ?? `type ${actionType}`;
    super(`the local durable runtime does not support ${known} actions`);
  }
}

/** What an orchestrator's list of actions says beyond its tasks: whether it continues as new, with what. */
export interface ActionSummary {
  readonly continueAsNew: { readonly input: unknown } | undefined;
}

/**
 * Reads the SDK's action list, depth first: refuses the kinds of action this runtime does not run
 * (critical sections on entities, durable HTTP), and finds a `continueAsNew`. The tasks themselves are numbered from what
 * the SDK tracked (sdk-tasks.ts), since a task with retries takes numbers no action shows.
 */
export function summarizeActions(actions: readonly (readonly SdkAction[])[]): ActionSummary {
  const summary: { continueAsNew?: { input: unknown } } = {};
  for (const batch of actions) for (const action of batch) visitAction(action, summary);
  return { continueAsNew: summary.continueAsNew };
}

/** Runs on every episode: a function of its own rather than a closure made each time. */
function visitAction(action: SdkAction, summary: { continueAsNew?: { input: unknown } }): void {
  switch (action.actionType) {
    case ActionType.CallActivity:
    case ActionType.CallActivityWithRetry:
    case ActionType.CallSubOrchestrator:
    case ActionType.CallSubOrchestratorWithRetry:
    case ActionType.CreateTimer:
    case ActionType.WaitForExternalEvent:
    case ActionType.CallEntity:
    case ActionType.SignalEntity:
      return;
    case ActionType.ContinueAsNew:
      summary.continueAsNew = { input: action.input };
      return;
    case ActionType.WhenAll:
    case ActionType.WhenAny:
      for (const child of action.compoundActions ?? []) visitAction(child, summary);
      return;
    default:
      throw new UnsupportedActionError(action.actionType);
  }
}

/** The tasks a history says were scheduled, by sequence number. */
export interface RecordedTask {
  readonly id: number;
  readonly task: ScheduledTask;
}

export function recordedTasks(events: readonly HistoryEvent[]): RecordedTask[] {
  return events.flatMap((e): RecordedTask[] => {
    if (e.EventType === EventType.TaskScheduled) {
      return [{ id: e.EventId, task: { kind: "activity", name: String(e.Name), input: e.Input } as const }];
    }
    if (e.EventType === EventType.SubOrchestrationInstanceCreated) {
      const task = {
        kind: "subOrchestration",
        name: String(e.Name),
        input: e.Input,
        instanceId: String(e.InstanceId),
      } as const;
      return [{ id: e.EventId, task }];
    }
    if (e.EventType === EventType.EventSent) {
      // The event's own name is the extension's "op"; the operation is in the request it carries.
      const request = JSON.parse(String(e.Input)) as { operation?: string; signal?: boolean };
      const task = {
        kind: "entity",
        name: String(request.operation),
        entityId: String(e.InstanceId),
        input: undefined,
        signal: request.signal === true,
      } as const;
      return [{ id: e.EventId, task }];
    }
    if (e.EventType === EventType.TimerCreated) {
      const task = { kind: "timer", fireAt: new Date(String(e.FireAt)), canceled: false } as const;
      return [{ id: e.EventId, task }];
    }
    return [];
  });
}

function describe(task: ScheduledTask): string {
  if (task.kind === "activity") return `activity ${task.name}`;
  if (task.kind === "subOrchestration") return `sub-orchestration ${task.name}`;
  if (task.kind === "entity")
    return `${task.signal ? "signal" : "call"} ${task.name} on entity ${task.entityId}`;
  return `timer at ${task.fireAt.toISOString()}`;
}

/**
 * The determinism check the JS SDK does not do: replaying the history must ask for the same tasks, in
 * the same order, as were recorded. Returns a description of the first difference, or undefined.
 */
export function firstMismatch(
  recorded: readonly RecordedTask[],
  replayed: readonly ScheduledTask[],
): string | undefined {
  for (const [index, { id, task }] of recorded.entries()) {
    const now = replayed[index];
    if (!now)
      return `history has ${describe(task)} as task ${id}, but the orchestrator no longer schedules it`;
    const same =
      now.kind === "timer"
        ? task.kind === "timer" && now.fireAt.getTime() === task.fireAt.getTime()
        : task.kind !== "timer" &&
          now.kind === task.kind &&
          now.name === task.name &&
          (now.kind !== "entity" ||
            (task.kind === "entity" && now.entityId === task.entityId && now.signal === task.signal));
    if (!same) return `task ${id} was ${describe(task)} in history, but replay scheduled ${describe(now)}`;
  }
  return undefined;
}
