import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import type { RuntimeStatus } from "../../src/ports/durable-client.js";
import type { HistoryEvent } from "./history.js";

export interface InstanceRow {
  readonly instanceId: string;
  readonly executionId: string;
  readonly name: string;
  readonly status: RuntimeStatus;
  readonly input: string | null;
  readonly output: string | null;
  readonly failure: string | null;
  readonly customStatus: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** A sub-orchestration's parent; absent for an instance a client started. */
  readonly parent?: ParentLink;
}

/** Where a sub-orchestration reports its end: its parent's execution and the task waiting for it. */
export interface ParentLink {
  readonly instanceId: string;
  readonly executionId: string;
  readonly taskId: number;
}

/** A sub-orchestration an episode starts, with the events to record for it. */
export interface ChildStart {
  readonly row: InstanceRow & { readonly parent: ParentLink };
  readonly started: HistoryEvent;
  /** What the parent gets instead if an instance with the child's id is still running. */
  readonly refused: HistoryEvent;
}

/** An operation for a durable entity, as queued for it. */
export interface EntityRequest {
  /** The id the caller's answer is raised under (the SDK waits for an event of that name). */
  readonly id: string;
  readonly operation: string;
  readonly signal: boolean;
  /** JSON, or null for none. */
  readonly input: string | null;
  /** The orchestration waiting for the answer of a call; absent for a signal. */
  readonly caller?: { readonly instanceId: string; readonly executionId: string };
}

export interface QueuedEntityRequest {
  readonly rowId: number;
  readonly request: EntityRequest;
}

/** What one run of an entity's operations leaves behind, written in one transaction. */
export interface EntityBatch {
  /** The entity's scheduler id, `@name@key`. */
  readonly entityId: string;
  readonly exists: boolean;
  readonly state: string | null;
  /** The last request of the batch: it and the ones before it are done. */
  readonly upToRowId: number;
  /** Answers to the calls of the batch, each for its caller's inbox. */
  readonly answers: readonly {
    readonly caller: { readonly instanceId: string; readonly executionId: string };
    readonly event: HistoryEvent;
  }[];
  /** Signals the entity sent to entities (itself included). */
  readonly signals: readonly { readonly entityId: string; readonly request: EntityRequest }[];
  readonly at: number;
}

export interface InboxEntry {
  readonly id: number;
  readonly event: HistoryEvent;
}

export interface ActivityWork {
  readonly id: number;
  readonly instanceId: string;
  readonly executionId: string;
  readonly taskId: number;
  readonly name: string;
  readonly input: string | null;
}

export interface TimerWork {
  readonly id: number;
  readonly instanceId: string;
  readonly timerId: number;
  readonly fireAt: number;
}

export interface QueuedWork {
  readonly activities: readonly ActivityWork[];
  readonly timers: readonly TimerWork[];
  /** The sub-orchestrations started, as written. */
  readonly children: readonly InstanceRow[];
  /** Instances that got an event from this episode: its parent, or itself when a child was refused. */
  readonly notified: readonly string[];
  /** Entities the episode sent operations to. */
  readonly entities: readonly string[];
}

export interface EpisodeCommit {
  readonly instanceId: string;
  readonly executionId: string;
  /** Inbox entries up to this id were fed to the episode and are now history (0: none were). */
  readonly consumedUpTo: number;
  /** Activities whose results were fed to the episode: their work is done. */
  readonly completedActivityIds: readonly number[];
  readonly events: readonly HistoryEvent[];
  readonly activities: readonly { taskId: number; name: string; input: string | null }[];
  readonly timers: readonly { timerId: number; fireAt: number }[];
  readonly canceledTimerIds: readonly number[];
  readonly status: RuntimeStatus;
  readonly output: string | null;
  readonly failure: string | null;
  readonly customStatus: string | null;
  readonly at: number;
  readonly children: readonly ChildStart[];
  /** Operations the episode sent to entities (calls and signals). */
  readonly entityRequests: readonly { readonly entityId: string; readonly request: EntityRequest }[];
  /** A finished sub-orchestration's word to its parent. */
  readonly toParent?: { readonly link: ParentLink; readonly event: HistoryEvent };
  /** The execution that replaces this one (`continueAsNew`): same instance, new input, fresh history. */
  readonly continueAsNew?: { readonly row: InstanceRow; readonly started: HistoryEvent };
}

interface RawInstance {
  instance_id: string;
  execution_id: string;
  name: string;
  status: RuntimeStatus;
  input: string | null;
  output: string | null;
  failure: string | null;
  custom_status: string | null;
  created_at: number;
  updated_at: number;
  parent_instance_id: string | null;
  parent_execution_id: string | null;
  parent_task_id: number | null;
}

/**
 * Where the local durable runtime keeps its state, in the embedded database: instances, their
 * histories, an inbox of events not yet replayed, and outstanding activity and timer work. Every
 * change the runtime makes is one transaction here, so a process that dies loses nothing committed.
 */
export class DurableStore {
  private readonly statements;

  /** One transaction wrapper for every unit of work: building one per call costs more than the work. */
  private readonly inTransaction;

  /**
   * The inbox as committed, per instance, oldest first: read on every episode, so it is kept in memory
   * rather than queried and parsed each time. Every inbox write goes through this store, and each
   * one changes this copy only once its transaction has committed.
   */
  private inboxes: Map<string, InboxEntry[]> | undefined;
  /** Changes to `inboxes` made by the transaction under way, applied when it commits. */
  private staged: ((inboxes: Map<string, InboxEntry[]>) => void)[] = [];
  private inTransactionDepth = 0;
  /**
   * The number of each instance's last history row, as committed, so that the next row is written
   * without a query for it (one row goes in per episode). An instance is absent until its first row
   * written since the store opened (the query is made then, once), and again once its history is
   * deleted or its execution has finished, so the map holds only the instances under way.
   */
  private readonly lastEpisodes = new Map<string, number>();
  /** The transaction under way's changes to `lastEpisodes` (undefined: forget), merged when it commits. */
  private lastEpisodesWritten = new Map<string, number | undefined>();

  constructor(db: EmbeddedDatabase) {
    this.inTransaction = db.transaction((work: () => unknown) => work());
    this.statements = { ...instanceStatements(db), ...workStatements(db), ...entityStatements(db) };
  }

  instance(instanceId: string): InstanceRow | undefined {
    const row = this.statements.instance.get(instanceId);
    return row ? toInstance(row) : undefined;
  }

  history(instanceId: string): HistoryEvent[] {
    return this.statements.history.all(instanceId).flatMap((r) => JSON.parse(r.events) as HistoryEvent[]);
  }

  inbox(instanceId: string): InboxEntry[] {
    return [...(this.committedInboxes().get(instanceId) ?? [])];
  }

  /** Instances with events waiting, the one with the oldest event first. */
  instancesWithInbox(): string[] {
    return [...this.committedInboxes().keys()];
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
      if (replacing) this.deleteEverything(row.instanceId);
      this.writeInstance(row);
      this.addInbox(row.instanceId, row.executionId, started);
    });
  }

  /**
   * Writes a new execution's row. Its history is empty: an instance id is only ever reused after its
   * history was deleted (replaced, continued as new), and a purge deletes the history with the row.
   */
  private writeInstance(row: Omit<InstanceRow, "output" | "failure" | "customStatus">): void {
    this.lastEpisodesWritten.set(row.instanceId, 0);
    this.statements.upsertInstance.run(
      row.instanceId,
      row.executionId,
      row.name,
      row.status,
      row.input,
      row.createdAt,
      row.updatedAt,
      row.parent?.instanceId ?? null,
      row.parent?.executionId ?? null,
      row.parent?.taskId ?? null,
    );
  }

  /**
   * Records episodes, each with its new history, consumed inbox, new work, cancelled timers and the
   * instance's status, in one transaction. Returns the work each episode queued.
   */
  commitEpisodes(commits: readonly EpisodeCommit[]): QueuedWork[] {
    return this.transaction(() => commits.map((commit) => this.applyEpisode(commit)));
  }

  private applyEpisode(commit: EpisodeCommit): QueuedWork {
    const { instanceId, executionId } = commit;
    this.appendHistory(instanceId, commit.events);
    if (commit.consumedUpTo > 0) {
      this.statements.consumeInbox.run(instanceId, commit.consumedUpTo);
      this.stage((inboxes) => {
        const rest = inboxes.get(instanceId)?.filter((entry) => entry.id > commit.consumedUpTo) ?? [];
        if (rest.length > 0) inboxes.set(instanceId, rest);
        else inboxes.delete(instanceId);
      });
    }
    const finished = commit.status !== "Running" && commit.status !== "Pending";
    if (!finished) for (const id of commit.completedActivityIds) this.statements.deleteActivity.run(id);
    // A finished instance takes no more work; events that arrived during its last episode are dropped.
    if (finished) this.deleteWork(instanceId);
    // The ids come from `lastInsertRowid`: `RETURNING id` costs a statement step of its own.
    const activities = (finished ? [] : commit.activities).map((a) => {
      const { lastInsertRowid } = this.statements.addActivity.run(
        instanceId,
        executionId,
        a.taskId,
        a.name,
        a.input,
      );
      return { id: Number(lastInsertRowid), instanceId, executionId, ...a };
    });
    for (const timerId of commit.canceledTimerIds) this.statements.cancelTimer.run(instanceId, timerId);
    const timers = (finished ? [] : commit.timers).map((t) => {
      const { lastInsertRowid } = this.statements.addTimer.run(instanceId, executionId, t.timerId, t.fireAt);
      return { id: Number(lastInsertRowid), instanceId, timerId: t.timerId, fireAt: t.fireAt };
    });
    this.statements.updateInstance.run(
      commit.status,
      commit.output,
      commit.failure,
      commit.customStatus,
      commit.at,
      instanceId,
      executionId,
    );
    const notified: string[] = [];
    const children: InstanceRow[] = [];
    for (const child of finished ? [] : commit.children) {
      if (this.startChild(child)) children.push(child.row);
      else {
        this.addInbox(instanceId, executionId, child.refused);
        notified.push(instanceId);
      }
    }
    if (commit.toParent && this.tellParent(commit.toParent.link, commit.toParent.event)) {
      notified.push(commit.toParent.link.instanceId);
    }
    if (commit.continueAsNew) this.continueAsNew(commit.continueAsNew.row, commit.continueAsNew.started);
    const entities: string[] = [];
    for (const { entityId, request } of commit.entityRequests) {
      this.addEntityRequest(entityId, request);
      if (!entities.includes(entityId)) entities.push(entityId);
    }
    return { activities, timers, children, notified, entities };
  }

  /** One history row per episode: its events are only ever read back together with the rest. */
  private appendHistory(instanceId: string, events: readonly HistoryEvent[]): void {
    const json = JSON.stringify(events);
    const last = this.lastEpisodesWritten.has(instanceId)
      ? this.lastEpisodesWritten.get(instanceId)
      : this.lastEpisodes.get(instanceId);
    if (last === undefined) {
      const { episode } = this.statements.appendHistory.get(instanceId, json, instanceId) as {
        episode: number;
      };
      this.lastEpisodesWritten.set(instanceId, episode);
    } else {
      // Noted first: should the row fail (its number taken), the transaction's failure forgets it.
      this.lastEpisodesWritten.set(instanceId, last + 1);
      this.statements.insertHistory.run(instanceId, last + 1, json);
    }
  }

  /** A committed change to `lastEpisodes` (a bound method: `forEach` over the map makes no entry arrays). */
  private readonly mergeLastEpisode = (last: number | undefined, instanceId: string): void => {
    if (last === undefined) this.lastEpisodes.delete(instanceId);
    else this.lastEpisodes.set(instanceId, last);
  };

  private deleteHistory(instanceId: string): void {
    this.statements.deleteHistory.run(instanceId);
    this.lastEpisodesWritten.set(instanceId, undefined);
  }

  private addEntityRequest(entityId: string, request: EntityRequest): void {
    this.statements.addEntityRequest.run(entityId, JSON.stringify(request));
  }

  /** Queues an operation for an entity (a client's signal), in a transaction of its own. */
  queueEntityRequest(entityId: string, request: EntityRequest): void {
    this.transaction(() => this.addEntityRequest(entityId, request));
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
        .filter(({ caller, event }) => this.tellParent(caller, event))
        .map(({ caller }) => caller.instanceId);
      for (const { entityId, request } of batch.signals) this.addEntityRequest(entityId, request);
      return { notified, entities: [...new Set(batch.signals.map((s) => s.entityId))] };
    });
  }

  /** Starts a sub-orchestration; false, starting nothing, if an instance with its id is still active. */
  private startChild(child: ChildStart): boolean {
    const existing = this.instance(child.row.instanceId);
    if (existing && isActive(existing.status)) return false;
    if (existing) this.deleteEverything(child.row.instanceId);
    this.writeInstance(child.row);
    this.addInbox(child.row.instanceId, child.row.executionId, child.started);
    return true;
  }

  /** Gives a parent its child's result (or a caller an entity's answer), if the execution that asked still runs. */
  private tellParent(link: { instanceId: string; executionId: string }, event: HistoryEvent): boolean {
    const parent = this.instance(link.instanceId);
    if (!parent || parent.executionId !== link.executionId || !isActive(parent.status)) return false;
    this.addInbox(link.instanceId, link.executionId, event);
    return true;
  }

  /**
   * Replaces a finished execution with a new one of the same instance: its history and outstanding
   * work go (its activities' results and its timers would mean nothing to the new one), while events
   * raised to the instance and not yet taken stay for the new execution, as under the extension.
   */
  private continueAsNew(row: InstanceRow, started: HistoryEvent): void {
    const { instanceId } = row;
    this.deleteHistory(instanceId);
    this.statements.deleteActivities.run(instanceId);
    this.statements.deleteTimers.run(instanceId);
    this.statements.deleteStaleInbox.run(instanceId);
    this.stage((inboxes) => {
      const raised = inboxes.get(instanceId)?.filter((entry) => entry.event.EventType === 15) ?? [];
      if (raised.length > 0) inboxes.set(instanceId, raised);
      else inboxes.delete(instanceId);
    });
    this.writeInstance(row);
    this.addInbox(instanceId, row.executionId, started);
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
        this.addInbox(work.instanceId, work.executionId, event);
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
        this.addInbox(timer.instanceId, timer.executionId, event(timer));
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
        this.addInbox(instanceId, activeExecution, event);
        return "delivered";
      }
      const instance = this.instance(instanceId);
      if (!instance) return "notFound";
      if (!isActive(instance.status)) return "notRunning";
      this.addInbox(instanceId, instance.executionId, event);
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
      const instance = this.instance(instanceId);
      if (!instance || !isActive(instance.status)) return { terminated: false };
      this.deleteWork(instanceId);
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
      if (link && this.tellParent(link, toParent(instance)))
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
      const instance = this.instance(instanceId);
      if (!instance || isActive(instance.status)) return false;
      this.deleteEverything(instanceId);
      this.statements.deleteInstance.run(instanceId);
      return true;
    });
  }

  purge(instanceId: string): boolean {
    return this.transaction(() => {
      const existed = this.instance(instanceId) !== undefined;
      this.deleteEverything(instanceId);
      this.statements.deleteInstance.run(instanceId);
      return existed;
    });
  }

  private addInbox(instanceId: string, executionId: string, event: HistoryEvent): void {
    const json = JSON.stringify(event);
    const { lastInsertRowid } = this.statements.addInbox.run(instanceId, executionId, json);
    // The event as it reads back from the table, so the copy in memory and a reload never differ.
    const entry: InboxEntry = { id: Number(lastInsertRowid), event: JSON.parse(json) };
    this.stage((inboxes) => {
      const entries = inboxes.get(instanceId);
      if (entries) entries.push(entry);
      else inboxes.set(instanceId, [entry]);
    });
  }

  /** What an execution that ended leaves: no more work, and no more history rows to number. */
  private deleteWork(instanceId: string): void {
    this.statements.deleteInbox.run(instanceId);
    this.statements.deleteActivities.run(instanceId);
    this.statements.deleteTimers.run(instanceId);
    this.stage((inboxes) => inboxes.delete(instanceId));
    this.lastEpisodesWritten.set(instanceId, undefined);
  }

  private deleteEverything(instanceId: string): void {
    this.deleteWork(instanceId);
    this.deleteHistory(instanceId);
  }

  private committedInboxes(): Map<string, InboxEntry[]> {
    if (!this.inboxes) {
      this.inboxes = new Map();
      for (const row of this.statements.inboxes.all()) {
        const entry: InboxEntry = { id: row.id, event: JSON.parse(row.event) };
        const entries = this.inboxes.get(row.instance_id);
        if (entries) entries.push(entry);
        else this.inboxes.set(row.instance_id, [entry]);
      }
    }
    return this.inboxes;
  }

  private stage(change: (inboxes: Map<string, InboxEntry[]>) => void): void {
    this.staged.push(change);
  }

  private transaction<T>(work: () => T): T {
    if (this.inTransactionDepth > 0) return work();
    const inboxes = this.committedInboxes();
    this.staged = [];
    this.lastEpisodesWritten.clear();
    this.inTransactionDepth++;
    let committed = false;
    try {
      const result = this.inTransaction.immediate(work) as T;
      committed = true;
      this.lastEpisodesWritten.forEach(this.mergeLastEpisode);
      for (const change of this.staged) change(inboxes);
      return result;
    } finally {
      this.inTransactionDepth--;
      this.staged = [];
      // A failed transaction may have failed on a number this store believed free (a row written
      // behind its back): the instances it touched are asked for their numbers again.
      if (!committed)
        for (const instanceId of this.lastEpisodesWritten.keys()) this.lastEpisodes.delete(instanceId);
      this.lastEpisodesWritten.clear();
    }
  }
}

export function isActive(status: RuntimeStatus): boolean {
  return status === "Pending" || status === "Running";
}

function toInstance(row: RawInstance): InstanceRow {
  return {
    instanceId: row.instance_id,
    executionId: row.execution_id,
    name: row.name,
    status: row.status,
    input: row.input,
    output: row.output,
    failure: row.failure,
    customStatus: row.custom_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.parent_instance_id !== null && row.parent_execution_id !== null && row.parent_task_id !== null
      ? {
          parent: {
            instanceId: row.parent_instance_id,
            executionId: row.parent_execution_id,
            taskId: row.parent_task_id,
          },
        }
      : {}),
  };
}

/** A statement prepared on `db`, its parameters and row typed. */
function preparer(db: EmbeddedDatabase) {
  return <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
}

/** Instances, their histories and their inboxes. */
function instanceStatements(db: EmbeddedDatabase) {
  const s = preparer(db);
  return {
    instance: s<[string], RawInstance>("SELECT * FROM df_instances WHERE instance_id = ?"),
    history: s<[string], { events: string }>(
      "SELECT events FROM df_history WHERE instance_id = ? ORDER BY episode",
    ),
    appendHistory: s<[string, string, string], { episode: number }>(
      `INSERT INTO df_history (instance_id, episode, events)
       SELECT ?, COALESCE(MAX(episode), 0) + 1, ? FROM df_history WHERE instance_id = ?
       RETURNING episode`,
    ),
    insertHistory: s<[string, number, string]>(
      "INSERT INTO df_history (instance_id, episode, events) VALUES (?, ?, ?)",
    ),
    inboxes: s<[], { id: number; instance_id: string; event: string }>(
      "SELECT id, instance_id, event FROM df_inbox ORDER BY id",
    ),
    addInbox: s<[string, string, string]>(
      "INSERT INTO df_inbox (instance_id, execution_id, event) VALUES (?, ?, ?)",
    ),
    consumeInbox: s<[string, number]>("DELETE FROM df_inbox WHERE instance_id = ? AND id <= ?"),
    upsertInstance: s<
      [
        string,
        string,
        string,
        string,
        string | null,
        number,
        number,
        string | null,
        string | null,
        number | null,
      ]
    >(
      `INSERT INTO df_instances (instance_id, execution_id, name, status, input, created_at, updated_at,
         parent_instance_id, parent_execution_id, parent_task_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (instance_id) DO UPDATE SET execution_id = excluded.execution_id, name = excluded.name,
         status = excluded.status, input = excluded.input, output = NULL, failure = NULL,
         custom_status = NULL, created_at = excluded.created_at, updated_at = excluded.updated_at,
         parent_instance_id = excluded.parent_instance_id, parent_execution_id = excluded.parent_execution_id,
         parent_task_id = excluded.parent_task_id`,
    ),
    deleteStaleInbox: s<[string]>(
      "DELETE FROM df_inbox WHERE instance_id = ? AND json_extract(event, '$.EventType') != 15",
    ),
    updateInstance: s<[RuntimeStatus, string | null, string | null, string | null, number, string, string]>(
      `UPDATE df_instances SET status = ?, output = ?, failure = ?, custom_status = ?, updated_at = ?
       WHERE instance_id = ? AND execution_id = ?`,
    ),
    deleteInbox: s<[string]>("DELETE FROM df_inbox WHERE instance_id = ?"),
    deleteHistory: s<[string]>("DELETE FROM df_history WHERE instance_id = ?"),
    deleteInstance: s<[string]>("DELETE FROM df_instances WHERE instance_id = ?"),
    createdBefore: s<[number], RawInstance>(
      "SELECT * FROM df_instances WHERE created_at < ? ORDER BY created_at, instance_id",
    ),
    finishedBefore: s<[number], { instance_id: string }>(
      `SELECT instance_id FROM df_instances
       WHERE status IN ('Completed', 'Failed', 'Terminated') AND created_at < ? ORDER BY created_at`,
    ),
  };
}

/** Outstanding activities and timers. */
function workStatements(db: EmbeddedDatabase) {
  const s = preparer(db);
  return {
    addActivity: s<[string, string, number, string, string | null]>(
      "INSERT INTO df_activities (instance_id, execution_id, task_id, name, input) VALUES (?, ?, ?, ?, ?)",
    ),
    activities: s<[], ActivityWork>(
      `SELECT id, instance_id AS instanceId, execution_id AS executionId, task_id AS taskId, name, input
       FROM df_activities ORDER BY id`,
    ),
    deleteActivity: s<[number]>("DELETE FROM df_activities WHERE id = ?"),
    takeActivity: s<[number], { instanceId: string; executionId: string }>(
      "DELETE FROM df_activities WHERE id = ? RETURNING instance_id AS instanceId, execution_id AS executionId",
    ),
    addTimer: s<[string, string, number, number]>(
      "INSERT INTO df_timers (instance_id, execution_id, timer_id, fire_at) VALUES (?, ?, ?, ?)",
    ),
    timers: s<[], TimerWork>(
      "SELECT id, instance_id AS instanceId, timer_id AS timerId, fire_at AS fireAt FROM df_timers ORDER BY fire_at",
    ),
    timer: s<[number], TimerWork & { executionId: string }>(
      `SELECT id, instance_id AS instanceId, execution_id AS executionId, timer_id AS timerId, fire_at AS fireAt
       FROM df_timers WHERE id = ?`,
    ),
    deleteTimer: s<[number]>("DELETE FROM df_timers WHERE id = ?"),
    cancelTimer: s<[string, number]>("DELETE FROM df_timers WHERE instance_id = ? AND timer_id = ?"),
    deleteActivities: s<[string]>("DELETE FROM df_activities WHERE instance_id = ?"),
    deleteTimers: s<[string]>("DELETE FROM df_timers WHERE instance_id = ?"),
  };
}

/** Durable entities: their state and the operations queued for them. */
function entityStatements(db: EmbeddedDatabase) {
  const s = preparer(db);
  return {
    addEntityRequest: s<[string, string]>(
      "INSERT INTO df_entity_requests (entity_id, request) VALUES (?, ?)",
    ),
    entityRequests: s<[string, number], { id: number; request: string }>(
      "SELECT id, request FROM df_entity_requests WHERE entity_id = ? ORDER BY id LIMIT ?",
    ),
    entitiesWithRequests: s<[], { entity_id: string }>(
      "SELECT entity_id FROM df_entity_requests GROUP BY entity_id ORDER BY MIN(id)",
    ),
    doneEntityRequests: s<[string, number]>("DELETE FROM df_entity_requests WHERE entity_id = ? AND id <= ?"),
    entity: s<[string], { state: string | null }>("SELECT state FROM df_entities WHERE entity_id = ?"),
    saveEntity: s<[string, string | null, number]>(
      `INSERT INTO df_entities (entity_id, state, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (entity_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
    ),
    deleteEntity: s<[string]>("DELETE FROM df_entities WHERE entity_id = ?"),
  };
}
