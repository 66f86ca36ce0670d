/**
 * The tasks an orchestrator asked for, by sequence number, as the SDK numbered them.
 *
 * The SDK numbers a task when it first tracks it. For most tasks that is the order of its list of
 * actions, but a task with retries (`callActivityWithRetry`, `callSubOrchestratorWithRetry`) has one
 * action and takes a new number for every retry timer and every further attempt, at the moment its
 * executor processes the failure or the timer: numbers that no list of actions shows. So this module
 * records what the SDK's executor tracks, as it tracks it (a hook on the pinned SDK's
 * `TaskOrchestrationExecutor`), with the orchestration's time at that moment, which a retry's timer
 * is scheduled from, as the extension schedules it.
 */
import { createRequire } from "node:module";
import { ActionType, type ScheduledTask, UnsupportedActionError } from "./history.js";

/** The SDK's `RetryOptions`, as an orchestrator passes them. */
export interface SdkRetryOptions {
  readonly firstRetryIntervalInMilliseconds: number;
  readonly maxNumberOfAttempts: number;
  readonly backoffCoefficient?: number;
  readonly maxRetryIntervalInMilliseconds?: number;
  readonly retryTimeoutInMilliseconds?: number;
}

interface SdkAction {
  readonly actionType: number;
  readonly functionName?: string;
  /** An entity operation's name. */
  readonly operation?: string;
  readonly input?: unknown;
  readonly instanceId?: string;
  readonly fireAt?: Date | string;
  readonly isCanceled?: boolean;
  readonly retryOptions?: SdkRetryOptions;
}

/** The parts of an SDK task this module reads: a retry's timers and further attempts carry "noOp". */
interface SdkTask {
  readonly id: number | string | false;
  readonly actionObj: SdkAction | "noOp" | undefined;
  readonly parent?: SdkTask & { readonly children?: readonly SdkTask[] };
}

interface Tracked {
  readonly id: number;
  readonly task: SdkTask;
  /** The orchestration's time when the task was numbered. */
  readonly at: Date;
  /** The task as converted last time: a session's executor is asked again on every episode. */
  converted: ScheduledTask | undefined;
}

interface Executor {
  readonly context?: { readonly currentUtcDateTime?: Date };
  sequenceNumber: number;
  trackOpenTask(task: SdkTask): void;
  recordFireAndForgetAction(action: SdkAction, sequenceNumberIncrement?: number): void;
}

/**
 * What each executor numbered, beside it rather than on it: a property added to the SDK's objects
 * after construction would change their shape and slow every access the SDK makes to them.
 */
const numbered = new WeakMap<object, Numbered>();

interface Numbered {
  readonly tracked: Tracked[];
  /** What `numberedTasks` returned last for the executor, kept to be extended. */
  readonly list: ScheduledTask[];
}

/** The executor that numbered a task last, and what it numbered. */
const last: { executor: object | undefined; numbered: Numbered | undefined } = {
  executor: undefined,
  numbered: undefined,
};
/** The hooks this module installed, to tell a hooked executor from one of another copy of the SDK. */
const hooks = new WeakSet<object>();
let installed = false;

/**
 * Hooks the SDK's executor so that every task it numbers is recorded on the executor, once per
 * process. Throws if the SDK is not the one this runtime was written against.
 */
export function trackSdkTasks(): void {
  if (installed) return;
  const require = createRequire(import.meta.url);
  const module = require("durable-functions/lib/src/orchestrations/TaskOrchestrationExecutor.js") as {
    TaskOrchestrationExecutor?: { prototype: Executor };
  };
  const prototype = module.TaskOrchestrationExecutor?.prototype;
  const track = prototype?.trackOpenTask;
  const fireAndForget = prototype?.recordFireAndForgetAction;
  if (!prototype || typeof track !== "function" || typeof fireAndForget !== "function") {
    throw new Error(
      "durable-functions' TaskOrchestrationExecutor is not the one the local durable runtime hooks: it needs the SDK version pinned in package.json",
    );
  }
  const record = (executor: Executor, id: number, task: SdkTask) => {
    // The SDK replaces its current time on each episode rather than changing it: no copy needed.
    const entry: Tracked = {
      id,
      task,
      at: executor.context?.currentUtcDateTime ?? new Date(0),
      converted: undefined,
    };
    // An executor numbers its tasks one after another: the last one's list saves a weak map lookup.
    if (executor === last.executor && last.numbered) {
      last.numbered.tracked.push(entry);
      return;
    }
    let known = numbered.get(executor);
    if (known) known.tracked.push(entry);
    else {
      known = { tracked: [entry], list: [] };
      numbered.set(executor, known);
    }
    last.executor = executor;
    last.numbered = known;
  };
  prototype.trackOpenTask = function trackOpenTask(this: Executor, task: SdkTask): void {
    const unnumbered = task.id === false;
    track.call(this, task);
    if (unnumbered && typeof task.id === "number") record(this, task.id, task);
  };
  // A signal to an entity takes a number without a task to track.
  prototype.recordFireAndForgetAction = function recordFireAndForgetAction(
    this: Executor,
    action: SdkAction,
    increment = 1,
  ): void {
    const id = this.sequenceNumber;
    fireAndForget.call(this, action, increment);
    if (this.sequenceNumber === id + 1) record(this, id, { id, actionObj: action });
  };
  hooks.add(prototype.trackOpenTask);
  installed = true;
}

/** The SDK's executor, which it leaves on the orchestration context it ran with. */
export function executorOf(context: object & { readonly df?: unknown }): unknown {
  return (context.df as { taskOrchestratorExecutor?: unknown } | undefined)?.taskOrchestratorExecutor;
}

/**
 * Every task the executor numbered so far, in number order, as the extension would schedule it.
 * Throws `UnsupportedActionError` for a kind of task this runtime does not run. The list is kept for
 * the executor's next episode and extended in place: read it within the episode, never change it.
 */
export function numberedTasks(executor: unknown): readonly ScheduledTask[] {
  if (typeof executor !== "object" || executor === null) return [];
  if (!hooks.has((executor as Executor).trackOpenTask)) {
    // Its tasks would go unseen and the orchestration would wait for work never scheduled.
    throw new Error(
      "the orchestrator ran on a copy of durable-functions the local durable runtime has not hooked: the app and the runtime must share one",
    );
  }
  // Numbers are handed out one by one as tasks are tracked, so the list is already in number order.
  const known = numbered.get(executor);
  if (!known) return [];
  const { tracked, list } = known;
  // A session's executor is asked again on every episode: the list grows by what the episode numbered,
  // and only a timer that was cancelled since is converted again.
  for (let index = 0; index < tracked.length; index++) {
    const entry = tracked[index];
    if (!entry) continue;
    const converted = entry.converted;
    if (converted && (converted.kind !== "timer" || converted.canceled || !isCanceled(entry.task))) continue;
    entry.converted = scheduledTask(entry.task, entry.at, tracked);
    list[index] = entry.converted;
  }
  return list;
}

/** Whether a timer's task, or the long timer it is part of, has been cancelled. */
function isCanceled(task: SdkTask): boolean {
  const action = task.actionObj;
  const whole = task.parent?.actionObj;
  return (
    (typeof action === "object" && action.isCanceled === true) ||
    (typeof whole === "object" && whole.actionType === ActionType.CreateTimer && whole.isCanceled === true)
  );
}

/** A task as the extension would schedule it; `tracked` tells when a retry's first attempt was numbered. */
function scheduledTask(task: SdkTask, at: Date, tracked: readonly Tracked[]): ScheduledTask {
  const parent = task.parent;
  const retryAction = retryOf(parent?.actionObj);
  if (task.actionObj === "noOp" && parent && retryAction) {
    // A retrying task's children: the first attempt, then a timer and an attempt for each failure.
    const index = parent.children?.indexOf(task) ?? -1;
    const first = parent.children?.[0];
    if (index < 1 || !first) throw new Error(`a retry's task ${String(task.id)} is not among its children`);
    // Its retry timeout counts from when the first attempt was numbered.
    if (index % 2 === 1) {
      const firstNumberedAt = tracked.find((entry) => entry.task === first)?.at;
      return retryTimer(retryAction, (index + 1) / 2, at, firstNumberedAt);
    }
    return work(retryAction);
  }
  const action = task.actionObj;
  if (typeof action !== "object" || typeof action.actionType !== "number") {
    throw new Error(`the orchestrator tracked task ${String(task.id)} without an action`);
  }
  if (action.actionType === ActionType.CreateTimer) {
    // A timer longer than the SDK's maximum is a chain of shorter ones under one task, cancelled as one.
    return { kind: "timer", fireAt: new Date(action.fireAt ?? 0), canceled: isCanceled(task) };
  }
  return work(action);
}

/** The action of a task with retries, with its options; undefined for any other. */
function retryOf(
  action: SdkTask["actionObj"],
): (SdkAction & { readonly retryOptions: SdkRetryOptions }) | undefined {
  if (typeof action !== "object" || !action.retryOptions) return undefined;
  const type = action.actionType;
  const retrying =
    type === ActionType.CallActivityWithRetry || type === ActionType.CallSubOrchestratorWithRetry;
  return retrying ? { ...action, retryOptions: action.retryOptions } : undefined;
}

/** An activity, sub-orchestration or entity operation, the first attempt of a retrying one included. */
function work(action: SdkAction): Exclude<ScheduledTask, { kind: "timer" }> {
  switch (action.actionType) {
    case ActionType.CallActivity:
    case ActionType.CallActivityWithRetry:
      return {
        kind: "activity",
        name: action.functionName ?? "",
        input: action.input,
      };
    case ActionType.CallSubOrchestrator:
    case ActionType.CallSubOrchestratorWithRetry:
      return {
        kind: "subOrchestration",
        name: action.functionName ?? "",
        input: action.input,
        instanceId: action.instanceId || undefined,
      };
    case ActionType.CallEntity:
    case ActionType.SignalEntity:
      return {
        kind: "entity",
        name: action.operation ?? "",
        entityId: action.instanceId ?? "",
        input: action.input,
        signal: action.actionType === ActionType.SignalEntity,
      };
    default:
      throw new UnsupportedActionError(action.actionType);
  }
}

/**
 * The timer between a retrying task's failed attempt and its next, as the Durable Task Framework's
 * retry interceptor computes it: the first interval times the backoff coefficient to the power of the
 * failures before this one, at most the maximum interval, from the time the failure was processed.
 * The extension schedules one after the last allowed attempt too (the SDK waits for it before failing
 * the task). Past the retry timeout it schedules none, which the SDK cannot be told: see `expired`.
 */
function retryTimer(
  action: SdkAction & { readonly retryOptions: SdkRetryOptions },
  failures: number,
  at: Date,
  firstAttempt: Date | undefined,
): ScheduledTask {
  const options = action.retryOptions;
  const interval =
    options.firstRetryIntervalInMilliseconds * (options.backoffCoefficient ?? 1) ** (failures - 1);
  const delay = Math.min(interval, options.maxRetryIntervalInMilliseconds ?? Number.POSITIVE_INFINITY);
  const timeout = options.retryTimeoutInMilliseconds;
  const expired =
    timeout !== undefined && firstAttempt !== undefined && at.getTime() >= firstAttempt.getTime() + timeout;
  const retry = { task: action.functionName ?? "", failures, timeoutMs: timeout, expired };
  return { kind: "timer", fireAt: new Date(at.getTime() + delay), canceled: false, retry };
}
