import { randomUUID } from "node:crypto";
import type { InvocationContext } from "@azure/functions";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import type { Clock } from "../../src/ports/clock.js";
import {
  type DurableClient,
  FINISHED_STATUSES,
  InstanceAlreadyRunningError,
  type OrchestrationStatus,
  type RaiseEventResult,
  type RuntimeStatus,
  type StartOptions,
} from "../../src/ports/durable-client.js";
import type { Logger } from "../../src/ports/logger.js";
import { type BindingData, invocationContextFor } from "../worker/invocation-context.js";
import type { CapturedFunction, FunctionRegistry } from "../worker/registration-capture.js";
import { ActiveExecutions } from "./active-executions.js";
import { CompletionWaiters } from "./completion-waiters.js";
import { DurableStore, type EntityRequest, type InstanceRow, isActive } from "./durable-store.js";
import { type EntityKey, schedulerIdOf } from "./entity-runner.js";
import { EpisodeReplayer } from "./episode-replayer.js";
import { childFailure } from "./execution-links.js";
import { type HistoryEvent, history, toPayload } from "./history.js";
import { parsePayload, toStatus } from "./instance-status.js";
import { trackSdkTasks } from "./sdk-tasks.js";
import { WorkLoop } from "./work-loop.js";

export interface LocalDurableRuntimeOptions {
  readonly db: EmbeddedDatabase;
  readonly clock: Clock;
  /** The app's functions, captured from its `df.app.orchestration` / `df.app.activity` registrations. */
  readonly registry: FunctionRegistry;
  readonly logger: Logger;
  /** Activities of all instances that may run at once (default 16). */
  readonly maxConcurrentActivities?: number;
  /**
   * Keep each running orchestration in memory between episodes and give it only its new events,
   * instead of replaying its whole history (replay-session.ts). Faster; the determinism check then
   * runs only on full replays. Default false: tests of orchestrations should replay every episode.
   */
  readonly replaySessions?: boolean;
  /**
   * The data of an activity's extra input bindings, as the host gives it (a durable client's, for
   * `df.getClient`). Absent, activities get no extra inputs.
   */
  readonly bindingData?: BindingData;
}

/** Instance ids as Durable Functions accepts them: 1 to 100 characters, none of / \\ # ? or control characters. */
function isValidInstanceId(id: string): boolean {
  if (id.length < 1 || id.length > 100) return false;
  // By UTF-16 code unit: none of the refused characters is part of a surrogate pair.
  for (let index = 0; index < id.length; index++) {
    const code = id.charCodeAt(index);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return false;
    if (code === 0x2f || code === 0x5c || code === 0x23 || code === 0x3f) return false; // / \ # ?
  }
  return true;
}

/** Which instances a query or a purge is about; every bound is optional. */
export interface InstanceFilter {
  readonly createdFrom?: Date;
  readonly createdBefore?: Date;
  readonly statuses?: readonly RuntimeStatus[];
}

/**
 * Runs Durable Functions orchestrators without the Functions host: the app's registered orchestrator
 * functions replay their history through the SDK's own executor, as under the extension, while this
 * runtime keeps the history, runs activities, arms timers and delivers events, durably in SQLite.
 *
 * One runtime owns a database file at a time. Episodes of one instance never overlap; activities of
 * all instances run concurrently up to a limit. Activities run at least once: one interrupted by a
 * crash runs again when a runtime next opens the file.
 */
export class LocalDurableRuntime implements DurableClient {
  private readonly store: DurableStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly orchestrators = new Map<string, CapturedFunction>();
  private readonly executions: ActiveExecutions;
  private readonly waiters: CompletionWaiters;
  private readonly loop: WorkLoop;

  private constructor(options: LocalDurableRuntimeOptions) {
    trackSdkTasks();
    this.store = new DurableStore(options.db);
    this.clock = options.clock;
    this.logger = options.logger;
    const maxConcurrentActivities = options.maxConcurrentActivities ?? 16;
    if (!Number.isInteger(maxConcurrentActivities) || maxConcurrentActivities < 1) {
      throw new RangeError(
        `maxConcurrentActivities must be a positive integer; got ${maxConcurrentActivities}`,
      );
    }
    for (const fn of options.registry.withTrigger("orchestrationTrigger"))
      this.orchestrators.set(fn.name, fn);
    const contextOf = invocationContextsFor(options.logger, options.bindingData);
    this.executions = new ActiveExecutions(options.logger);
    this.waiters = new CompletionWaiters(this.store);
    this.loop = new WorkLoop({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      executions: this.executions,
      replayer: new EpisodeReplayer({
        store: this.store,
        clock: this.clock,
        orchestrators: this.orchestrators,
        executions: this.executions,
        replaySessions: options.replaySessions ?? false,
        contextOf,
      }),
      waiters: this.waiters,
      activities: new Map(
        options.registry.withTrigger("activityTrigger").map((fn) => [fn.name, fn] as const),
      ),
      // Entity names are matched as the SDK addresses them, in lower case.
      entities: new Map(
        options.registry.withTrigger("entityTrigger").map((fn) => [fn.name.toLowerCase(), fn] as const),
      ),
      maxConcurrentActivities,
      contextOf,
    });
  }

  /** Opens the runtime on a database and resumes whatever it holds: pending events, activities, timers. */
  static open(options: LocalDurableRuntimeOptions): LocalDurableRuntime {
    const runtime = new LocalDurableRuntime(options);
    runtime.loop.resume();
    return runtime;
  }

  async startNew(orchestrationName: string, options: StartOptions): Promise<string> {
    this.assertRunning();
    const { instanceId } = options;
    if (!isValidInstanceId(instanceId)) {
      throw new RangeError(
        `instance id ${JSON.stringify(instanceId)} must be 1 to 100 characters without / \\ # ? or control characters`,
      );
    }
    if (!this.orchestrators.has(orchestrationName)) {
      throw new Error(`no orchestration named ${orchestrationName} is registered`);
    }
    const known = this.executions.instances.get(instanceId);
    if (known) {
      throw new InstanceAlreadyRunningError(
        instanceId,
        this.store.instance(instanceId)?.status ?? known.status,
      );
    }
    const existing = this.store.instance(instanceId);
    if (existing && isActive(existing.status))
      throw new InstanceAlreadyRunningError(instanceId, existing.status);
    const at = this.clock.now();
    const input = toPayload(options.input) ?? null;
    const row: InstanceRow = {
      instanceId,
      executionId: randomUUID(),
      name: orchestrationName,
      status: "Pending",
      input,
      output: null,
      failure: null,
      customStatus: null,
      createdAt: at.getTime(),
      updatedAt: at.getTime(),
    };
    this.store.createInstance(
      row,
      history.executionStarted(at, orchestrationName, input ?? undefined),
      existing !== undefined,
    );
    this.logger.info("durable.instance.scheduled", { instanceId, orchestration: orchestrationName });
    this.executions.forget(instanceId);
    // What replay needs of the new execution, as committed: its first episode need not read it back.
    this.loop.track(row);
    return instanceId;
  }

  async raiseEvent(instanceId: string, eventName: string, eventData?: unknown): Promise<RaiseEventResult> {
    this.assertRunning();
    // An instance this runtime holds in memory is active: forget() drops it when it ends.
    const outcome = this.store.raiseEvent(
      instanceId,
      history.eventRaised(this.clock.now(), eventName, toPayload(eventData)),
      this.executions.instances.get(instanceId)?.executionId,
    );
    if (outcome !== "delivered") {
      this.logger.warn("durable.event.dropped", { instanceId, eventName, reason: outcome });
      return { delivered: false, reason: outcome };
    }
    this.loop.schedule(instanceId);
    return { delivered: true };
  }

  /** Queues an operation for an entity with no one waiting for an answer, as the SDK client's `signalEntity`. */
  async signalEntity(entity: EntityKey, operation: string, input?: unknown): Promise<void> {
    this.assertRunning();
    const entityId = schedulerIdOf(entity);
    const request: EntityRequest = {
      id: randomUUID(),
      operation,
      signal: true,
      input: toPayload(input) ?? null,
    };
    this.store.queueEntityRequest(entityId, request);
    this.loop.entities.queue([entityId]);
    this.loop.wake();
  }

  /** An entity's state as last written, as the SDK client's `readEntityState`; undefined if it does not exist. */
  async readEntityState(entity: EntityKey): Promise<{ state: unknown } | undefined> {
    const row = this.store.entity(schedulerIdOf(entity));
    return row ? { state: parsePayload(row.state) } : undefined;
  }

  async getStatus(instanceId: string): Promise<OrchestrationStatus | undefined> {
    const row = this.store.instance(instanceId);
    return row ? toStatus(row) : undefined;
  }

  async terminate(instanceId: string, reason: string): Promise<void> {
    this.assertRunning();
    const now = this.clock.now();
    const { terminated, notified } = this.store.terminate(instanceId, reason, now.getTime(), (row) =>
      history.subOrchestrationFailed(
        now,
        row.parent?.taskId ?? -1,
        childFailure(row, `was terminated: ${reason}`),
      ),
    );
    if (!terminated) return;
    this.executions.forget(instanceId);
    this.logger.warn("durable.instance.terminated", { instanceId, reason });
    this.waiters.notifyIfFinished(instanceId);
    if (notified) this.loop.schedule(notified);
  }

  async purge(instanceId: string): Promise<boolean> {
    this.executions.forget(instanceId);
    return this.store.purge(instanceId);
  }

  async listFinished(filter: { readonly createdBefore: Date }): Promise<readonly string[]> {
    return this.store.finishedBefore(filter.createdBefore.getTime());
  }

  /**
   * The instances created from one time (inclusive) to another (exclusive), each bound optional, in
   * the given states (any without them), oldest first: the query the SDK's `getStatusBy` makes.
   */
  async listStatuses(filter: InstanceFilter): Promise<OrchestrationStatus[]> {
    return this.matching(filter).map(toStatus);
  }

  /**
   * Purges the finished instances (Completed, Failed, Terminated) that match the filter, as the SDK's
   * `purgeInstanceHistoryBy` asks; a running one is left alone, whatever the filter says, since its
   * history is what it runs on. Returns how many were purged.
   */
  async purgeMatching(filter: InstanceFilter): Promise<number> {
    let purged = 0;
    for (const row of this.matching(filter)) {
      if (!FINISHED_STATUSES.includes(row.status)) continue;
      // Checked again as it is deleted: the instance may have been started anew since the query.
      if (this.store.purgeIfFinished(row.instanceId)) {
        this.executions.forget(row.instanceId);
        purged++;
      }
    }
    return purged;
  }

  private matching(filter: InstanceFilter): InstanceRow[] {
    const before = filter.createdBefore?.getTime() ?? Number.MAX_SAFE_INTEGER;
    const from = filter.createdFrom?.getTime() ?? Number.MIN_SAFE_INTEGER;
    return this.store
      .instancesCreatedBefore(before)
      .filter((row) => row.createdAt >= from && (!filter.statuses || filter.statuses.includes(row.status)));
  }

  /** The instance's history as recorded: for tests and for operators investigating a failure. */
  historyOf(instanceId: string): HistoryEvent[] {
    return this.store.history(instanceId);
  }

  /** Resolves when the instance has finished (Completed, Failed or Terminated). */
  waitForCompletion(instanceId: string, timeoutMs = 30_000): Promise<OrchestrationStatus> {
    return this.waiters.wait(instanceId, timeoutMs);
  }

  /**
   * Resolves when nothing is left to do without time passing: no events waiting for an episode, no
   * activity queued or running. Timers may still be pending; with a virtual clock, advance it next.
   */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  /** Stops taking new work, lets running activities finish and record their results, then stops. */
  close(): Promise<void> {
    return this.loop.close();
  }

  /** Stops at once, as a killed process would: nothing more is written, running activities are abandoned. */
  halt(): void {
    this.loop.halt();
  }

  private assertRunning(): void {
    if (this.loop.state !== "running") throw new Error(`the durable runtime is ${this.loop.state}`);
  }
}

/** The invocation context each function gets, as the Functions worker gives it. */
function invocationContextsFor(
  logger: Logger,
  bindingData: BindingData | undefined,
): (fn: CapturedFunction) => InvocationContext {
  const init = { logger, ...(bindingData ? { bindingData } : {}) };
  return (fn) => invocationContextFor(fn, init);
}
