import type { InvocationContext } from "@azure/functions";
import type { Clock } from "../../src/ports/clock.js";
import type { Logger } from "../../src/ports/logger.js";
import type { CapturedFunction } from "../worker/registration-capture.js";
import type { ActiveExecutions } from "./active-executions.js";
import type { DurableStore } from "./durable-store.js";
import { failureDetailsOf, type HistoryEvent, history, toPayload } from "./history.js";
import type { ActivityWork } from "./store-records.js";

export type RuntimeState = "running" | "closing" | "closed" | "halted";

/** What the runtime's work loop gives the activities it runs. */
export interface ActivityHost {
  readonly state: RuntimeState;
  /** Instances with events waiting for an episode. */
  readonly pending: Set<string>;
  wake(): void;
  notifyIdle(): void;
}

export interface ActivityExecutorOptions {
  readonly store: DurableStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The app's activity functions, by name. */
  readonly functions: ReadonlyMap<string, CapturedFunction>;
  readonly executions: ActiveExecutions;
  /** Activities of all instances that may run at once. */
  readonly maxConcurrent: number;
  readonly contextOf: (fn: CapturedFunction) => InvocationContext;
}

/**
 * Runs the activities that committed episodes scheduled, of all instances at once up to a limit, and
 * keeps each result for its instance's next episode. An activity of an execution that ended or was
 * replaced meanwhile is dropped when its turn comes.
 */
export class ActivityExecutor {
  private readonly store: DurableStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly functions: ReadonlyMap<string, CapturedFunction>;
  private readonly executions: ActiveExecutions;
  private readonly maxConcurrent: number;
  private readonly contextOf: (fn: CapturedFunction) => InvocationContext;
  private readonly running = new Map<number, Promise<void>>();
  /** Activity work committed but not yet started, oldest first. */
  private queued: ActivityWork[] = [];

  constructor(
    private readonly host: ActivityHost,
    options: ActivityExecutorOptions,
  ) {
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
    this.functions = options.functions;
    this.executions = options.executions;
    this.maxConcurrent = options.maxConcurrent;
    this.contextOf = options.contextOf;
  }

  /** The work a runtime opening the file must run: everything outstanding, oldest first. */
  resume(work: ActivityWork[]): void {
    this.queued = work;
  }

  enqueue(work: readonly ActivityWork[]): void {
    for (const activity of work) this.queued.push(activity);
  }

  isIdle(): boolean {
    return this.running.size === 0 && this.queued.length === 0;
  }

  /** Resolves when every activity running now has finished and recorded its result. */
  settled(): Promise<unknown> {
    return Promise.allSettled(this.running.values());
  }

  start(): void {
    while (this.host.state === "running" && this.running.size < this.maxConcurrent) {
      const work = this.queued.shift();
      if (!work) return;
      if (this.executions.instances.get(work.instanceId)?.executionId !== work.executionId) continue;
      const running = this.run(work).finally(() => {
        this.running.delete(work.id);
        this.host.wake();
        this.host.notifyIdle();
      });
      this.running.set(work.id, running);
    }
  }

  private async run(work: {
    id: number;
    instanceId: string;
    executionId: string;
    taskId: number;
    name: string;
    input: string | null;
  }): Promise<void> {
    let result: HistoryEvent;
    try {
      const activity = this.functions.get(work.name);
      if (!activity) throw new Error(`no activity named ${work.name} is registered`);
      const input = work.input === null ? undefined : JSON.parse(work.input);
      const output = await activity.handler(input, this.contextOf(activity));
      // The SDK parses every TaskCompleted result; the extension sends "null" for an activity that returns nothing.
      result = history.taskCompleted(this.clock.now(), work.taskId, toPayload(output) ?? "null");
    } catch (error) {
      this.logger.warn("durable.activity.failed", {
        instanceId: work.instanceId,
        activity: work.name,
        taskId: work.taskId,
        error,
      });
      result = history.taskFailed(this.clock.now(), work.taskId, failureDetailsOf(error));
    }
    if (this.host.state === "halted" || this.host.state === "closed") return;
    const completion = { activityId: work.id, executionId: work.executionId, event: result };
    const waiting = this.executions.completions.get(work.instanceId);
    if (waiting) waiting.push(completion);
    else this.executions.completions.set(work.instanceId, [completion]);
    // While closing, no pump runs: write the result now so a graceful stop loses nothing.
    if (this.host.state === "closing") this.writeCompletions();
    else this.host.pending.add(work.instanceId);
  }

  /**
   * Writes every result not yet in a history to the inbox of its instance, in one transaction: what a
   * runtime that is stopping does, since no episode will take them.
   */
  private writeCompletions(): void {
    const results = [...this.executions.completions.values()].flat();
    this.executions.completions.clear();
    if (results.length === 0) return;
    const delivered = this.store.completeActivities(results);
    if (delivered.size < results.length) {
      this.logger.info("durable.activity.result.dropped", { count: results.length - delivered.size });
    }
  }
}
