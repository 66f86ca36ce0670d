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
import {
  type ActivityWork,
  type ChildStart,
  DurableStore,
  type EntityRequest,
  type EpisodeCommit,
  type InstanceRow,
  isActive,
  type ParentLink,
  type TimerWork,
} from "./durable-store.js";
import { type EntityKey, EntityRunner, schedulerIdOf } from "./entity-runner.js";
import {
  EventType,
  type FailureDetails,
  failureDetailsOf,
  firstMismatch,
  type HistoryEvent,
  history,
  type RecordedTask,
  recordedTasks,
  type ScheduledTask,
  summarizeActions,
  toPayload,
} from "./history.js";
import { ReplaySession } from "./replay-session.js";
import { executorOf, numberedTasks, trackSdkTasks } from "./sdk-tasks.js";
import { TimerQueue } from "./timer-queue.js";

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

/** What the SDK's orchestrator wrapper returns (or embeds in its error after `$OutOfProcData$:`). */
interface SdkState {
  readonly isDone: boolean;
  readonly actions: readonly (readonly never[])[];
  readonly output?: unknown;
  readonly error?: string;
  readonly customStatus?: unknown;
}

interface Episode {
  readonly instance: InstanceRow;
  readonly inboxEvents: number;
  /** The instance's history before this episode; the episode's events are appended once committed. */
  readonly past: HistoryEvent[];
  /** The tasks that history has scheduled, by sequence number. */
  readonly recorded: RecordedTask[];
  /** How many of the instance's waiting activity results it took (the first ones). */
  readonly completions: number;
  readonly commit: EpisodeCommit;
}

interface Completion {
  readonly activityId: number;
  readonly executionId: string;
  readonly event: HistoryEvent;
}

interface Replay {
  readonly done: boolean;
  readonly output: unknown;
  readonly failure: string | undefined;
  readonly customStatus: unknown;
  readonly tasks: readonly ScheduledTask[];
  /** Set when the orchestrator called `continueAsNew`, with the new execution's input. */
  readonly continueAsNew: { readonly input: unknown } | undefined;
}

/** The latest replay schema the SDK knows (V4), as a current extension offers it. */
const UPPER_SCHEMA_VERSION = 3;
const OUT_OF_PROC_DATA = "$OutOfProcData$:";
/** Instance ids as Durable Functions accepts them: 1 to 100 characters, none of / \\ # ? or control characters. */
function isValidInstanceId(id: string): boolean {
  if (id.length < 1 || id.length > 100) return false;
  return [...id].every((ch) => {
    const code = ch.charCodeAt(0);
    return !"/\\#?".includes(ch) && code > 0x1f && !(code >= 0x7f && code <= 0x9f);
  });
}

type RuntimeState = "running" | "closing" | "closed" | "halted";

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
  private readonly maxConcurrentActivities: number;
  private readonly orchestrators = new Map<string, CapturedFunction>();
  private readonly activities = new Map<string, CapturedFunction>();
  private readonly runningActivities = new Map<number, Promise<void>>();
  /** Armed timers of every instance, behind one sleep on the clock. */
  private readonly timers: TimerQueue<TimerWork>;
  /** Activity work committed but not yet started, oldest first. */
  private queuedActivities: ActivityWork[] = [];
  /**
   * What replay needs of each instance (name, input, execution); fixed for an execution's lifetime.
   * Only active executions are here: forget() drops an instance when it ends, so being here means
   * active. The client's calls rely on that to skip reading the instance back, and queued work or a
   * result of any other execution (one that ended, or was replaced by a new start) is dropped when
   * its turn comes, instead of filtering the queue.
   */
  private readonly instances = new Map<string, InstanceRow>();
  private state: RuntimeState = "running";
  private pumpScheduled = false;
  private pumping = false;
  private pumpAgain = false;
  private idleWaiters: (() => void)[] = [];
  /** Instances with events waiting for an episode. */
  private readonly pending = new Set<string>();
  /** Histories of running instances, as committed: the store is written through, never re-read. */
  private readonly histories = new Map<string, HistoryEvent[]>();
  /** The tasks each of those histories scheduled, kept with it so an episode need not scan it again. */
  private readonly recorded = new Map<string, RecordedTask[]>();
  /**
   * Activity results not yet in a history, per instance, in the order they came. The instance's next
   * episode takes them as new events and its commit deletes their work rows in the same transaction,
   * so a result costs no write of its own. A crash before that commit loses the result but not the
   * work row: the activity runs again on the next open, as one interrupted by the crash would.
   */
  private readonly completions = new Map<string, Completion[]>();
  /** Each recorded event in the form the SDK replays, made once; entries go with their events. */
  private readonly sdkEvents = new WeakMap<HistoryEvent, Readonly<Record<string, unknown>>>();
  /** Running orchestrations kept between episodes, when `replaySessions` is on. */
  private readonly sessions = new Map<string, ReplaySession>();
  private readonly replaySessions: boolean;
  private readonly entities: EntityRunner;
  private readonly bindingData: BindingData | undefined;
  private readonly completionWaiters = new Map<string, ((status: OrchestrationStatus) => void)[]>();

  private constructor(options: LocalDurableRuntimeOptions) {
    trackSdkTasks();
    this.timers = new TimerQueue(
      options.clock,
      (due) => this.fireTimers(due),
      (error, due) => this.logger.error("durable.timer.fire.failed", { timers: due.length, error }),
    );
    this.store = new DurableStore(options.db);
    this.clock = options.clock;
    this.logger = options.logger;
    this.maxConcurrentActivities = options.maxConcurrentActivities ?? 16;
    this.replaySessions = options.replaySessions ?? false;
    this.bindingData = options.bindingData;
    if (!Number.isInteger(this.maxConcurrentActivities) || this.maxConcurrentActivities < 1) {
      throw new RangeError(
        `maxConcurrentActivities must be a positive integer; got ${this.maxConcurrentActivities}`,
      );
    }
    for (const fn of options.registry.withTrigger("orchestrationTrigger"))
      this.orchestrators.set(fn.name, fn);
    for (const fn of options.registry.withTrigger("activityTrigger")) this.activities.set(fn.name, fn);
    this.entities = new EntityRunner({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      // Entity names are matched as the SDK addresses them, in lower case.
      functions: new Map(
        options.registry.withTrigger("entityTrigger").map((fn) => [fn.name.toLowerCase(), fn] as const),
      ),
      invocationContext: (fn) => this.invocationContext(fn),
      mayCommit: () => this.state === "running" || this.state === "closing",
      settled: (answered) => {
        for (const instanceId of answered) this.schedule(instanceId);
        this.wake();
        this.notifyIdle();
      },
    });
  }

  /** Opens the runtime on a database and resumes whatever it holds: pending events, activities, timers. */
  static open(options: LocalDurableRuntimeOptions): LocalDurableRuntime {
    const runtime = new LocalDurableRuntime(options);
    for (const timer of runtime.store.timers()) runtime.armTimer(timer);
    runtime.queuedActivities = runtime.store.activities();
    // Work rows exist only for active executions: the instances they belong to are active.
    for (const instanceId of new Set(runtime.queuedActivities.map((work) => work.instanceId))) {
      const instance = runtime.store.instance(instanceId);
      if (instance) runtime.instances.set(instanceId, instance);
    }
    for (const instanceId of runtime.store.instancesWithInbox()) runtime.pending.add(instanceId);
    runtime.entities.queue(runtime.store.entitiesWithRequests());
    runtime.wake();
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
    const known = this.instances.get(instanceId);
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
    this.forget(instanceId);
    // What replay needs of the new execution, as committed: its first episode need not read it back.
    this.instances.set(instanceId, row);
    this.histories.set(instanceId, []);
    this.recorded.set(instanceId, []);
    this.schedule(instanceId);
    return instanceId;
  }

  async raiseEvent(instanceId: string, eventName: string, eventData?: unknown): Promise<RaiseEventResult> {
    this.assertRunning();
    // An instance this runtime holds in memory is active: forget() drops it when it ends.
    const outcome = this.store.raiseEvent(
      instanceId,
      history.eventRaised(this.clock.now(), eventName, toPayload(eventData)),
      this.instances.get(instanceId)?.executionId,
    );
    if (outcome !== "delivered") {
      this.logger.warn("durable.event.dropped", { instanceId, eventName, reason: outcome });
      return { delivered: false, reason: outcome };
    }
    this.schedule(instanceId);
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
    this.entities.queue([entityId]);
    this.wake();
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
    this.forget(instanceId);
    this.logger.warn("durable.instance.terminated", { instanceId, reason });
    this.notifyIfFinished(instanceId);
    if (notified) this.schedule(notified);
  }

  async purge(instanceId: string): Promise<boolean> {
    this.forget(instanceId);
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
        this.forget(row.instanceId);
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
    const row = this.store.instance(instanceId);
    if (row && FINISHED_STATUSES.includes(row.status)) return Promise.resolve(toStatus(row));
    return new Promise((resolve, reject) => {
      const timeout = setTimeout(
        () => reject(new Error(`instance ${instanceId} did not finish within ${timeoutMs} ms`)),
        timeoutMs,
      );
      timeout.unref();
      const waiters = this.completionWaiters.get(instanceId) ?? [];
      waiters.push((status) => {
        clearTimeout(timeout);
        resolve(status);
      });
      this.completionWaiters.set(instanceId, waiters);
    });
  }

  /**
   * Resolves when nothing is left to do without time passing: no events waiting for an episode, no
   * activity queued or running. Timers may still be pending; with a virtual clock, advance it next.
   */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking new work, lets running activities finish and record their results, then stops. */
  async close(): Promise<void> {
    if (this.state !== "running") return;
    this.state = "closing";
    this.timers.close(); // armed timers stay in the store and are armed again on the next open
    await Promise.allSettled(this.runningActivities.values());
    await this.entities.close();
    this.state = "closed";
  }

  /** Stops at once, as a killed process would: nothing more is written, running activities are abandoned. */
  halt(): void {
    this.state = "halted";
    this.timers.close();
    this.entities.stopRetries();
  }

  private assertRunning(): void {
    if (this.state !== "running") throw new Error(`the durable runtime is ${this.state}`);
  }

  private wake(): void {
    if (this.state !== "running") return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      void this.pump();
    });
  }

  /** Drops what is cached or queued for an instance whose execution ended or is being replaced. */
  private forget(instanceId: string): void {
    this.histories.delete(instanceId);
    this.sessions.delete(instanceId);
    this.instances.delete(instanceId);
    this.recorded.delete(instanceId);
    const dropped = this.completions.get(instanceId)?.length ?? 0;
    this.completions.delete(instanceId);
    if (dropped > 0) this.logger.info("durable.activity.result.dropped", { instanceId, count: dropped });
  }

  private schedule(instanceId: string): void {
    this.pending.add(instanceId);
    this.wake();
  }

  /**
   * One round of work: write the activity results that came in, replay every instance that has new
   * events, commit all those episodes in one transaction, then start queued activities. Batching
   * keeps the number of commits per round constant however many instances are busy.
   */
  private async pump(): Promise<void> {
    if (this.pumping || this.state !== "running") return;
    this.pumping = true;
    const broken = new Set<string>();
    try {
      do {
        this.pumpAgain = false;
        const instanceIds = [...this.pending].filter((id) => !broken.has(id));
        for (const id of instanceIds) this.pending.delete(id);
        const episodes: Episode[] = [];
        for (const instanceId of instanceIds) {
          try {
            const episode = await this.replayEpisode(instanceId);
            if (episode) episodes.push(episode);
          } catch (error) {
            // A fault of the runtime or its store, not of the orchestrator: keep the events for a later try.
            broken.add(instanceId);
            this.logger.error("durable.episode.error", { instanceId, error });
          }
          if (this.state !== "running") return;
        }
        try {
          this.commit(episodes);
        } catch (error) {
          // Nothing of these episodes was written; their events (and results) wait for a later try.
          for (const episode of episodes) broken.add(episode.commit.instanceId);
          this.logger.error("durable.commit.error", { instances: episodes.length, error });
        }
        this.startActivities();
        this.entities.start();
      } while ((this.pumpAgain || this.hasPendingExcept(broken)) && this.state === "running");
    } finally {
      this.pumping = false;
      for (const id of broken) this.pending.add(id);
      this.notifyIdle();
    }
  }

  private hasPendingExcept(broken: Set<string>): boolean {
    for (const id of this.pending) if (!broken.has(id)) return true;
    return false;
  }

  /**
   * Writes every result not yet in a history to the inbox of its instance, in one transaction: what a
   * runtime that is stopping does, since no episode will take them.
   */
  private writeCompletions(): void {
    const results = [...this.completions.values()].flat();
    this.completions.clear();
    if (results.length === 0) return;
    const delivered = this.store.completeActivities(results);
    if (delivered.size < results.length) {
      this.logger.info("durable.activity.result.dropped", { count: results.length - delivered.size });
    }
  }

  /**
   * The results waiting for the instance's current execution; those of an execution that ended or was
   * replaced meanwhile (its work rows are gone with it) are dropped here.
   */
  private completionsFor(instanceId: string): Completion[] {
    const waiting = this.completions.get(instanceId);
    if (!waiting) return [];
    const live = this.instances.get(instanceId)?.executionId;
    const current = waiting.filter((completion) => completion.executionId === live);
    if (current.length < waiting.length) {
      this.logger.info("durable.activity.result.dropped", { count: waiting.length - current.length });
      if (current.length > 0) this.completions.set(instanceId, current);
      else this.completions.delete(instanceId);
    }
    return current;
  }

  /** Replays one instance with the events waiting for it and works out what to record; writes nothing. */
  private async replayEpisode(instanceId: string): Promise<Episode | undefined> {
    const inbox = this.store.inbox(instanceId);
    const lastEntry = inbox[inbox.length - 1];
    const completions = this.completionsFor(instanceId);
    if (!lastEntry && completions.length === 0) return undefined;
    const instance = this.instances.get(instanceId) ?? this.store.instance(instanceId);
    if (!instance) return undefined;
    this.instances.set(instanceId, instance);
    const at = this.clock.now();
    const past = this.histories.get(instanceId) ?? this.store.history(instanceId);
    const fresh = [
      history.orchestratorStarted(at),
      ...inbox.map((entry) => entry.event),
      ...completions.map((completion) => completion.event),
    ];
    const orchestrator = this.orchestrators.get(instance.name);

    // A session at the end of the committed history takes only the new events; otherwise replay in full.
    let session = this.resumable(instanceId, past.length);
    const resumed = session?.resume(fresh.map((event) => this.sdkEvent(event)));
    let replay: Replay;
    if (resumed) replay = replayOf(resumed, undefined, session?.sdkExecutor);
    else if (orchestrator) {
      const full = await this.replay(orchestrator, instance, [...past, ...fresh]);
      replay = full.replay;
      session = full.session;
    } else {
      replay = replayOf(
        { isDone: false, actions: [] },
        `no orchestration named ${instance.name} is registered`,
        undefined,
      );
      session = undefined;
    }

    const recorded = this.recorded.get(instanceId) ?? recordedTasks(past);
    const { failure, continuing, work } = outcomeOf(replay, recorded, at, instance);
    const { scheduledEvents, activities, timers, canceledTimerIds, nowRecorded, children, entityRequests } =
      work;
    const status: RuntimeStatus =
      failure !== undefined ? "Failed" : replay.done && !continuing ? "Completed" : "Running";
    const result = status === "Completed" ? toPayload(replay.output) : failure;
    const closing =
      status === "Completed" || status === "Failed" ? [history.executionCompleted(at, status, result)] : [];
    const events = [...fresh, ...scheduledEvents, history.orchestratorCompleted(at), ...closing];
    if (session && status === "Running" && !continuing && this.tellSession(session, scheduledEvents)) {
      session.historyLength = past.length + events.length;
      this.sessions.set(instanceId, session);
    }
    return {
      instance,
      inboxEvents: inbox.length + completions.length,
      completions: completions.length,
      past,
      recorded: nowRecorded,
      commit: {
        instanceId,
        executionId: instance.executionId,
        consumedUpTo: lastEntry?.id ?? 0,
        completedActivityIds: completions.map((completion) => completion.activityId),
        events,
        activities,
        timers,
        canceledTimerIds,
        status,
        output: status === "Completed" ? (toPayload(replay.output) ?? null) : null,
        failure: failure ?? null,
        customStatus: toPayload(replay.customStatus) ?? null,
        at: at.getTime(),
        children: children.map((child) => this.childStart(instance, child, at)),
        entityRequests,
        ...this.ending(instance, status, result, continuing, at),
      },
    };
  }

  /** How an execution's end reaches further: a sub-orchestration's parent is told, a `continueAsNew` starts the next. */
  private ending(
    instance: InstanceRow,
    status: RuntimeStatus,
    result: string | undefined,
    continuing: Replay["continueAsNew"],
    at: Date,
  ): Pick<EpisodeCommit, "toParent" | "continueAsNew"> {
    if (continuing) return { continueAsNew: this.nextExecution(instance, continuing.input, at) };
    if (!instance.parent || (status !== "Completed" && status !== "Failed")) return {};
    return {
      toParent: { link: instance.parent, event: parentEvent(instance, instance.parent, status, result, at) },
    };
  }

  /** A sub-orchestration the episode starts: a new instance linked to the task waiting for it. */
  private childStart(parent: InstanceRow, child: NewChild, at: Date): ChildStart {
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
  private nextExecution(
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

  /**
   * Gives a session the events it needs of those the episode adds: a call to an entity is known to
   * the SDK by the request id its `EventSent` carries, which a full replay reads from the history.
   * False if the session could not take them (it is then dropped, and the next episode replays).
   */
  private tellSession(session: ReplaySession, added: readonly HistoryEvent[]): boolean {
    const sent: Readonly<Record<string, unknown>>[] = [];
    for (const event of added) if (event.EventType === EventType.EventSent) sent.push(this.sdkEvent(event));
    return sent.length === 0 || session.resume(sent) !== undefined;
  }

  /**
   * The instance's session, taken out of the cache, if sessions are on and it has seen exactly the
   * committed history (an episode whose commit failed leaves its session behind that history).
   */
  private resumable(instanceId: string, historyLength: number): ReplaySession | undefined {
    const session = this.sessions.get(instanceId);
    this.sessions.delete(instanceId);
    return session?.historyLength === historyLength ? session : undefined;
  }

  private commit(episodes: readonly Episode[]): void {
    if (episodes.length === 0) return;
    const queued = this.store.commitEpisodes(episodes.map((e) => e.commit));
    for (const [index, episode] of episodes.entries()) {
      const { commit, instance } = episode;
      this.takeCompletions(commit.instanceId, episode.completions);
      const work = queued[index];
      for (const timer of work?.timers ?? []) this.armTimer(timer);
      for (const child of work?.children ?? []) this.track(child);
      for (const notified of work?.notified ?? []) this.schedule(notified);
      this.entities.queue(work?.entities ?? []);
      if (commit.continueAsNew) {
        this.forget(commit.instanceId);
        this.track(commit.continueAsNew.row);
        this.logger.info("durable.instance.continuedAsNew", {
          instanceId: commit.instanceId,
          orchestration: instance.name,
        });
        continue;
      }
      if (commit.status === "Running") {
        for (const event of commit.events) episode.past.push(event);
        this.histories.set(commit.instanceId, episode.past);
        this.recorded.set(commit.instanceId, episode.recorded);
        for (const activity of work?.activities ?? []) this.queuedActivities.push(activity);
      } else this.forget(commit.instanceId);
      const fields = {
        instanceId: commit.instanceId,
        orchestration: instance.name,
        events: episode.inboxEvents,
        scheduled: commit.activities.length + commit.timers.length,
      };
      if (commit.status === "Completed") this.logger.info("durable.instance.completed", fields);
      else if (commit.status === "Failed")
        this.logger.error("durable.instance.failed", { ...fields, failure: commit.failure });
      else this.logger.debug("durable.episode.completed", fields);
      if (commit.status !== "Running") {
        this.notifyIfFinished(commit.instanceId, {
          ...instance,
          status: commit.status,
          output: commit.output,
          failure: commit.failure,
          customStatus: commit.customStatus,
          updatedAt: commit.at,
        });
      }
    }
  }

  /** Holds a new execution, as committed, and queues its first episode. */
  private track(row: InstanceRow): void {
    this.instances.set(row.instanceId, row);
    this.histories.set(row.instanceId, []);
    this.recorded.set(row.instanceId, []);
    this.schedule(row.instanceId);
  }

  private takeCompletions(instanceId: string, count: number): void {
    if (count === 0) return;
    const rest = this.completions.get(instanceId)?.slice(count) ?? [];
    if (rest.length > 0) this.completions.set(instanceId, rest);
    else this.completions.delete(instanceId);
  }

  /** A full replay of `events` through the SDK; with sessions on, the session it leaves behind. */
  private async replay(
    orchestrator: CapturedFunction,
    instance: InstanceRow,
    events: HistoryEvent[],
  ): Promise<{ replay: Replay; session: ReplaySession | undefined }> {
    const trigger = {
      history: events.map((event) => this.sdkEvent(event)),
      input: instance.input === null ? undefined : JSON.parse(instance.input),
      instanceId: instance.instanceId,
      isReplaying: events.some((e) => e.EventType === 13),
      parentInstanceId: instance.parent?.instanceId ?? "",
      upperSchemaVersion: UPPER_SCHEMA_VERSION,
      maximumShortTimerDuration: "6.00:00:00",
      longRunningTimerIntervalDuration: "3.00:00:00",
      defaultHttpAsyncRequestSleepTimeMillseconds: 30_000,
    };
    const context = this.invocationContext(orchestrator);
    try {
      const state = (await orchestrator.handler(trigger, context)) as SdkState;
      const session = this.replaySessions && !state.isDone ? ReplaySession.after(context, 0) : undefined;
      return { replay: replayOf(state, undefined, executorOf(context)), session };
    } catch (error) {
      const embedded = stateEmbeddedIn(error);
      const failure = embedded?.error ?? (error instanceof Error ? error.message : String(error));
      const replay = replayOf(embedded ?? { isDone: false, actions: [] }, failure, undefined);
      return { replay, session: undefined };
    }
  }

  /**
   * The event as the SDK reads it, its timestamp a Date (the SDK would otherwise convert it in place).
   * Made once per event and handed to every later replay: frozen, so an SDK that wrote to it would fail
   * loudly rather than leak state from one replay into the next.
   */
  private sdkEvent(event: HistoryEvent): Readonly<Record<string, unknown>> {
    // With sessions an event is fed to the SDK once, so caching it would only cost the weak map's upkeep.
    if (this.replaySessions) return Object.freeze({ ...event, Timestamp: new Date(event.Timestamp) });
    let converted = this.sdkEvents.get(event);
    if (!converted) {
      converted = Object.freeze({ ...event, Timestamp: new Date(event.Timestamp) });
      this.sdkEvents.set(event, converted);
    }
    return converted;
  }

  private startActivities(): void {
    while (this.state === "running" && this.runningActivities.size < this.maxConcurrentActivities) {
      const work = this.queuedActivities.shift();
      if (!work) return;
      if (this.instances.get(work.instanceId)?.executionId !== work.executionId) continue;
      const running = this.runActivity(work).finally(() => {
        this.runningActivities.delete(work.id);
        this.wake();
        this.notifyIdle();
      });
      this.runningActivities.set(work.id, running);
    }
  }

  private async runActivity(work: {
    id: number;
    instanceId: string;
    executionId: string;
    taskId: number;
    name: string;
    input: string | null;
  }): Promise<void> {
    let result: HistoryEvent;
    try {
      const activity = this.activities.get(work.name);
      if (!activity) throw new Error(`no activity named ${work.name} is registered`);
      const input = work.input === null ? undefined : JSON.parse(work.input);
      const output = await activity.handler(input, this.invocationContext(activity));
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
    if (this.state === "halted" || this.state === "closed") return;
    const completion = { activityId: work.id, executionId: work.executionId, event: result };
    const waiting = this.completions.get(work.instanceId);
    if (waiting) waiting.push(completion);
    else this.completions.set(work.instanceId, [completion]);
    // While closing, no pump runs: write the result now so a graceful stop loses nothing.
    if (this.state === "closing") this.writeCompletions();
    else this.pending.add(work.instanceId);
  }

  private armTimer(timer: TimerWork): void {
    this.timers.add(timer, timer.fireAt);
  }

  /** Turns due timers into events, in one transaction; a timer cancelled meanwhile yields nothing. */
  private fireTimers(due: readonly TimerWork[]): void {
    if (this.state !== "running") return;
    const fired = this.store.fireTimers(
      due.map((timer) => timer.id),
      (t) => history.timerFired(this.clock.now(), t.timerId, new Date(t.fireAt)),
    );
    for (const instanceId of fired) this.schedule(instanceId);
  }

  private isIdle(): boolean {
    return (
      !this.pumpScheduled &&
      !this.pumping &&
      this.runningActivities.size === 0 &&
      this.pending.size === 0 &&
      this.completions.size === 0 &&
      this.queuedActivities.length === 0 &&
      this.entities.isIdle()
    );
  }

  private notifyIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** `committed`: the instance's row as just written, when the caller has it; read from the store otherwise. */
  private notifyIfFinished(instanceId: string, committed?: InstanceRow): void {
    const waiters = this.completionWaiters.get(instanceId);
    if (!waiters) return;
    const row = committed ?? this.store.instance(instanceId);
    if (!row || !FINISHED_STATUSES.includes(row.status)) return;
    this.completionWaiters.delete(instanceId);
    const status = toStatus(row);
    for (const resolve of waiters) resolve(status);
  }

  private invocationContext(fn: CapturedFunction): InvocationContext {
    return invocationContextFor(fn, {
      logger: this.logger,
      ...(this.bindingData ? { bindingData: this.bindingData } : {}),
    });
  }
}

/** A sub-orchestration a replay asked for, its instance id chosen. */
interface NewChild {
  readonly taskId: number;
  readonly name: string;
  readonly instanceId: string;
  readonly input: string | null;
}

interface NewWork {
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
function outcomeOf(
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

/** What a finished sub-orchestration's parent records: the child's result, or why it failed. */
function parentEvent(
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

function childFailure(child: InstanceRow, what: string): FailureDetails {
  return {
    ErrorType: "SubOrchestrationFailed",
    ErrorMessage: `sub-orchestration ${child.name} (instance ${child.instanceId}) ${what}`,
  };
}

function isCanceledTimer(task: ScheduledTask | undefined): boolean {
  return task?.kind === "timer" && task.canceled;
}

/**
 * The replay's result in the runtime's terms: its tasks as the SDK's executor numbered them. A kind of
 * action this runtime does not run is the orchestrator's failure.
 */
function replayOf(state: SdkState, failure: string | undefined, executor: unknown): Replay {
  try {
    const { continueAsNew } = summarizeActions(state.actions);
    return {
      done: state.isDone,
      output: state.output,
      failure,
      customStatus: state.customStatus,
      tasks: failure === undefined ? numberedTasks(executor) : [],
      continueAsNew,
    };
  } catch (error) {
    return {
      done: false,
      output: undefined,
      failure: (error as Error).message,
      customStatus: state.customStatus,
      tasks: [],
      continueAsNew: undefined,
    };
  }
}

function stateEmbeddedIn(error: unknown): (SdkState & { error?: string }) | undefined {
  const message = error instanceof Error ? error.message : "";
  const at = message.indexOf(OUT_OF_PROC_DATA);
  if (at < 0) return undefined;
  try {
    return JSON.parse(message.slice(at + OUT_OF_PROC_DATA.length)) as SdkState;
  } catch {
    return undefined;
  }
}

function parsePayload(payload: string | null): unknown {
  return payload === null ? undefined : JSON.parse(payload);
}

function toStatus(row: InstanceRow): OrchestrationStatus {
  return {
    instanceId: row.instanceId,
    name: row.name,
    runtimeStatus: row.status,
    input: parsePayload(row.input),
    output: parsePayload(row.output),
    customStatus: parsePayload(row.customStatus),
    failure: row.failure ?? undefined,
    createdTime: new Date(row.createdAt),
    lastUpdatedTime: new Date(row.updatedAt),
  };
}
