import type { InvocationContext } from "@azure/functions";
import type { Clock } from "../../src/ports/clock.js";
import type { Logger } from "../../src/ports/logger.js";
import type { CapturedFunction } from "../worker/registration-capture.js";
import type { ActiveExecutions } from "./active-executions.js";
import { ActivityExecutor, type ActivityHost, type RuntimeState } from "./activity-executor.js";
import type { CompletionWaiters } from "./completion-waiters.js";
import type { DurableStore } from "./durable-store.js";
import { EntityRunner } from "./entity-runner.js";
import type { Episode, EpisodeReplayer } from "./episode-replayer.js";
import { history } from "./history.js";
import type { InstanceRow, TimerWork } from "./store-records.js";
import { TimerQueue } from "./timer-queue.js";

export interface WorkLoopOptions {
  readonly store: DurableStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly executions: ActiveExecutions;
  readonly replayer: EpisodeReplayer;
  readonly waiters: CompletionWaiters;
  /** The app's activity functions, by name. */
  readonly activities: ReadonlyMap<string, CapturedFunction>;
  /** The app's entity functions, by name in lower case. */
  readonly entities: ReadonlyMap<string, CapturedFunction>;
  readonly maxConcurrentActivities: number;
  readonly contextOf: (fn: CapturedFunction) => InvocationContext;
}

/**
 * The runtime's rounds of work: the instances with new events replay their episodes, the episodes
 * are committed together, then activities and entity batches start; due timers and finished work
 * bring the next round. It also holds the runtime's state, from running to closed or halted.
 */
export class WorkLoop implements ActivityHost {
  /** Read by the runtime and the parts it runs; only `close` and `halt` change it. */
  state: RuntimeState = "running";
  /** Instances with events waiting for an episode. */
  readonly pending = new Set<string>();
  readonly entities: EntityRunner;
  private readonly store: DurableStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly executions: ActiveExecutions;
  private readonly replayer: EpisodeReplayer;
  private readonly waiters: CompletionWaiters;
  private readonly activities: ActivityExecutor;
  /** Armed timers of every instance, behind one sleep on the clock. */
  private readonly timers: TimerQueue<TimerWork>;
  private pumpScheduled = false;
  private pumping = false;
  private pumpAgain = false;
  private idleWaiters: (() => void)[] = [];

  constructor(options: WorkLoopOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
    this.executions = options.executions;
    this.replayer = options.replayer;
    this.waiters = options.waiters;
    this.timers = new TimerQueue(
      options.clock,
      (due) => this.fireTimers(due),
      (error, due) => this.logger.error("durable.timer.fire.failed", { timers: due.length, error }),
    );
    this.activities = new ActivityExecutor(this, {
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      functions: options.activities,
      executions: options.executions,
      maxConcurrent: options.maxConcurrentActivities,
      contextOf: options.contextOf,
    });
    this.entities = new EntityRunner({
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      functions: options.entities,
      invocationContext: options.contextOf,
      mayCommit: () => this.state === "running" || this.state === "closing",
      settled: (answered) => {
        for (const instanceId of answered) this.schedule(instanceId);
        this.wake();
        this.notifyIdle();
      },
    });
  }

  /** Takes up whatever the store holds: armed timers, outstanding activities, pending events and entity operations. */
  resume(): void {
    for (const timer of this.store.timers()) this.armTimer(timer);
    const activities = this.store.activities();
    this.activities.resume(activities);
    // Work rows exist only for active executions: the instances they belong to are active.
    for (const instanceId of new Set(activities.map((work) => work.instanceId))) {
      const instance = this.store.instance(instanceId);
      if (instance) this.executions.instances.set(instanceId, instance);
    }
    for (const instanceId of this.store.instancesWithInbox()) this.pending.add(instanceId);
    this.entities.queue(this.store.entitiesWithRequests());
    this.wake();
  }

  wake(): void {
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

  schedule(instanceId: string): void {
    this.pending.add(instanceId);
    this.wake();
  }

  /** Holds a new execution, as committed, and queues its first episode. */
  track(row: InstanceRow): void {
    this.executions.hold(row);
    this.schedule(row.instanceId);
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
            const episode = await this.replayer.replayEpisode(instanceId);
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
        this.activities.start();
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

  private commit(episodes: readonly Episode[]): void {
    if (episodes.length === 0) return;
    const queued = this.store.commitEpisodes(episodes.map((e) => e.commit));
    for (const [index, episode] of episodes.entries()) {
      const { commit, instance } = episode;
      this.executions.takeCompletions(commit.instanceId, episode.completions);
      const work = queued[index];
      for (const timer of work?.timers ?? []) this.armTimer(timer);
      for (const child of work?.children ?? []) this.track(child);
      for (const notified of work?.notified ?? []) this.schedule(notified);
      this.entities.queue(work?.entities ?? []);
      if (commit.continueAsNew) {
        this.executions.forget(commit.instanceId);
        this.track(commit.continueAsNew.row);
        this.logger.info("durable.instance.continuedAsNew", {
          instanceId: commit.instanceId,
          orchestration: instance.name,
        });
        continue;
      }
      if (commit.status === "Running") {
        for (const event of commit.events) episode.past.push(event);
        this.executions.histories.set(commit.instanceId, episode.past);
        this.executions.recorded.set(commit.instanceId, episode.recorded);
        this.activities.enqueue(work?.activities ?? []);
      } else this.executions.forget(commit.instanceId);
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
        this.waiters.notifyIfFinished(commit.instanceId, {
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
      this.pending.size === 0 &&
      this.executions.completions.size === 0 &&
      this.activities.isIdle() &&
      this.entities.isIdle()
    );
  }

  notifyIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
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
    await this.activities.settled();
    await this.entities.close();
    this.state = "closed";
  }

  /** Stops at once, as a killed process would: nothing more is written, running activities are abandoned. */
  halt(): void {
    this.state = "halted";
    this.timers.close();
    this.entities.stopRetries();
  }
}
