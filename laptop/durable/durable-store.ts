import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import { EpisodeWriter } from "./episode-writer.js";
import type { HistoryEvent } from "./history.js";
import { HistoryRows } from "./history-rows.js";
import { InboxCache } from "./inbox-cache.js";
import {
  type ActivityWork,
  type EntityBatch,
  type EntityRequest,
  type EpisodeCommit,
  type InboxEntry,
  type InstanceRow,
  isActive,
  type QueuedEntityRequest,
  type QueuedWork,
  type TimerWork,
} from "./store-records.js";
import { StoreRows } from "./store-rows.js";
import { prepareStatements, type StoreStatements, toInstance } from "./store-statements.js";

export type {
  ActivityWork,
  ChildStart,
  EntityBatch,
  EntityRequest,
  EpisodeCommit,
  InboxEntry,
  InstanceRow,
  ParentLink,
  QueuedEntityRequest,
  QueuedWork,
  TimerWork,
} from "./store-records.js";
export { isActive } from "./store-records.js";

/**
 * Where the local durable runtime keeps its state, in the embedded database: instances, their
 * histories, an inbox of events not yet replayed, and outstanding activity and timer work. Every
 * change the runtime makes is one transaction here, so a process that dies loses nothing committed.
 */
export class DurableStore {
  private readonly statements: StoreStatements;
  /** One transaction wrapper for every unit of work: building one per call costs more than the work. */
  private readonly inTransaction;
  private inTransactionDepth = 0;
  private readonly inboxes: InboxCache;
  private readonly histories: HistoryRows;
  private readonly rows: StoreRows;
  private readonly episodes: EpisodeWriter;

  constructor(db: EmbeddedDatabase) {
    this.inTransaction = db.transaction((work: () => unknown) => work());
    this.statements = prepareStatements(db);
    this.inboxes = new InboxCache(this.statements);
    this.histories = new HistoryRows(this.statements);
    this.rows = new StoreRows(this.statements, this.inboxes, this.histories);
    this.episodes = new EpisodeWriter(this.statements, this.inboxes, this.histories, this.rows);
  }

  instance(instanceId: string): InstanceRow | undefined {
    return this.rows.instance(instanceId);
  }

  history(instanceId: string): HistoryEvent[] {
    return this.histories.read(instanceId);
  }

  inbox(instanceId: string): InboxEntry[] {
    return this.inboxes.entries(instanceId);
  }

  /** Instances with events waiting, the one with the oldest event first. */
  instancesWithInbox(): string[] {
    return this.inboxes.instanceIds();
  }

  /**
   * Creates the instance and queues its start. `replacing`: an instance with this id exists (finished),
   * and its history and any leftover work go first; a new id has none to delete.
   */
  createInstance(
    row: Omit<InstanceRow, "output" | "failure" | "customStatus">,
    started: HistoryEvent,
    replacing: boolean,
  ): void {
    this.transaction(() => {
      if (replacing) this.rows.deleteEverything(row.instanceId);
      this.rows.writeInstance(row);
      this.inboxes.add(row.instanceId, row.executionId, started);
    });
  }

  /**
   * Records episodes, each with its new history, consumed inbox, new work, cancelled timers and the
   * instance's status, in one transaction. Returns the work each episode queued.
   */
  commitEpisodes(commits: readonly EpisodeCommit[]): QueuedWork[] {
    return this.transaction(() => commits.map((commit) => this.episodes.write(commit)));
  }

  /** Queues an operation for an entity (a client's signal), in a transaction of its own. */
  queueEntityRequest(entityId: string, request: EntityRequest): void {
    this.transaction(() => this.rows.addEntityRequest(entityId, request));
  }

  /** The entity's oldest waiting operations, at most `limit`. */
  entityRequests(entityId: string, limit: number): QueuedEntityRequest[] {
    return this.statements.entityRequests
      .all(entityId, limit)
      .map((row) => ({ rowId: row.id, request: JSON.parse(row.request) as EntityRequest }));
  }

  /** Entities with operations waiting, the one waiting longest first. */
  entitiesWithRequests(): string[] {
    return this.statements.entitiesWithRequests.all().map((row) => row.entity_id);
  }

  /** An entity's state: absent if it does not exist (never written, or deleted). */
  entity(entityId: string): { readonly state: string | null } | undefined {
    return this.statements.entity.get(entityId);
  }

  /**
   * Records a run of an entity's operations: its new state (or its deletion), the operations done,
   * the answers to their callers that are still running, and the signals it sent. Returns the
   * instances that got an answer and the entities that got a signal.
   */
  commitEntityBatch(batch: EntityBatch): { notified: string[]; entities: string[] } {
    return this.transaction(() => {
      if (batch.exists) this.statements.saveEntity.run(batch.entityId, batch.state, batch.at);
      else this.statements.deleteEntity.run(batch.entityId);
      this.statements.doneEntityRequests.run(batch.entityId, batch.upToRowId);
      const notified = batch.answers
        .filter(({ caller, event }) => this.rows.tellParent(caller, event))
        .map(({ caller }) => caller.instanceId);
      for (const { entityId, request } of batch.signals) this.rows.addEntityRequest(entityId, request);
      return { notified, entities: [...new Set(batch.signals.map((s) => s.entityId))] };
    });
  }

  /** All outstanding activity work, oldest first: what a runtime opening the file must run. */
  activities(): ActivityWork[] {
    return this.statements.activities.all();
  }

  /**
   * Turns finished activities into inbox events for their instances, in one transaction (a runtime
   * that is stopping keeps the results no episode took this way). Returns the instances that got an
   * event; a result whose work item is gone (its instance finished, was terminated or restarted
   * meanwhile) is dropped.
   */
  completeActivities(results: readonly { activityId: number; event: HistoryEvent }[]): Set<string> {
    return this.transaction(() => {
      const delivered = new Set<string>();
      for (const { activityId, event } of results) {
        const work = this.statements.takeActivity.get(activityId);
        if (!work) continue;
        // The work row proves its execution is current and active: ending or restarting deletes it.
        this.inboxes.add(work.instanceId, work.executionId, event);
        delivered.add(work.instanceId);
      }
      return delivered;
    });
  }

  timers(): TimerWork[] {
    return this.statements.timers.all();
  }

  /**
   * Turns due timers into TimerFired inbox events, in one transaction. Returns the instances that got
   * one; a timer cancelled meanwhile, or of an instance that ended, yields nothing.
   */
  fireTimers(ids: readonly number[], event: (timer: TimerWork) => HistoryEvent): Set<string> {
    return this.transaction(() => {
      const fired = new Set<string>();
      for (const id of ids) {
        const timer = this.statements.timer.get(id);
        if (!timer) continue;
        this.statements.deleteTimer.run(id);
        this.inboxes.add(timer.instanceId, timer.executionId, event(timer));
        fired.add(timer.instanceId);
      }
      return fired;
    });
  }

  /**
   * Queues an event for a Pending or Running instance; returns the instance's state otherwise.
   * `activeExecution`: the caller knows the instance is active on this execution, so it is not read.
   */
  raiseEvent(
    instanceId: string,
    event: HistoryEvent,
    activeExecution?: string,
  ): "delivered" | "notFound" | "notRunning" {
    return this.transaction(() => {
      if (activeExecution !== undefined) {
        this.inboxes.add(instanceId, activeExecution, event);
        return "delivered";
      }
      const instance = this.rows.instance(instanceId);
      if (!instance) return "notFound";
      if (!isActive(instance.status)) return "notRunning";
      this.inboxes.add(instanceId, instance.executionId, event);
      return "delivered";
    });
  }

  /**
   * Ends an active instance as Terminated. A sub-orchestration's parent is told, with the event
   * `toParent` makes. Returns whether the instance was active, and the parent told, if any.
   */
  terminate(
    instanceId: string,
    reason: string,
    at: number,
    toParent: (instance: InstanceRow) => HistoryEvent,
  ): { terminated: boolean; notified?: string } {
    return this.transaction(() => {
      const instance = this.rows.instance(instanceId);
      if (!instance || !isActive(instance.status)) return { terminated: false };
      this.rows.deleteWork(instanceId);
      this.statements.updateInstance.run(
        "Terminated",
        JSON.stringify(reason),
        null,
        instance.customStatus,
        at,
        instanceId,
        instance.executionId,
      );
      const link = instance.parent;
      if (link && this.rows.tellParent(link, toParent(instance)))
        return { terminated: true, notified: link.instanceId };
      return { terminated: true };
    });
  }

  /** Every instance created before `createdAt` (epoch ms), oldest first. */
  instancesCreatedBefore(createdAt: number): InstanceRow[] {
    return this.statements.createdBefore.all(createdAt).map(toInstance);
  }

  /** Finished instances created before `createdAt` (epoch ms). */
  finishedBefore(createdAt: number): string[] {
    return this.statements.finishedBefore.all(createdAt).map((row) => row.instance_id);
  }

  /** Purges the instance only if it is finished, read in the same transaction; false otherwise. */
  purgeIfFinished(instanceId: string): boolean {
    return this.transaction(() => {
      const instance = this.rows.instance(instanceId);
      if (!instance || isActive(instance.status)) return false;
      this.rows.deleteEverything(instanceId);
      this.statements.deleteInstance.run(instanceId);
      return true;
    });
  }

  purge(instanceId: string): boolean {
    return this.transaction(() => {
      const existed = this.rows.instance(instanceId) !== undefined;
      this.rows.deleteEverything(instanceId);
      this.statements.deleteInstance.run(instanceId);
      return existed;
    });
  }

  private transaction<T>(work: () => T): T {
    if (this.inTransactionDepth > 0) return work();
    this.inboxes.begin();
    this.histories.begin();
    this.inTransactionDepth++;
    let committed = false;
    try {
      const result = this.inTransaction.immediate(work) as T;
      committed = true;
      this.histories.commit();
      this.inboxes.commit();
      return result;
    } finally {
      this.inTransactionDepth--;
      this.inboxes.end();
      this.histories.end(committed);
    }
  }
}
