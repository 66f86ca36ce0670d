import type { HistoryEvent } from "./history.js";
import type { HistoryRows } from "./history-rows.js";
import type { InboxCache } from "./inbox-cache.js";
import {
  type ChildStart,
  type EpisodeCommit,
  type InstanceRow,
  isActive,
  type QueuedWork,
} from "./store-records.js";
import type { StoreRows } from "./store-rows.js";
import type { StoreStatements } from "./store-statements.js";

/**
 * Writes what one episode comes to, inside the transaction of its round: its history row, the inbox
 * it consumed, its new work, cancelled timers, status, the sub-orchestrations it starts, its word to
 * a parent, the execution that continues it, and its operations for entities.
 */
export class EpisodeWriter {
  constructor(
    private readonly statements: StoreStatements,
    private readonly inbox: InboxCache,
    private readonly histories: HistoryRows,
    private readonly rows: StoreRows,
  ) {}

  /** Returns the work the episode queued. */
  write(commit: EpisodeCommit): QueuedWork {
    const { instanceId, executionId } = commit;
    this.histories.append(instanceId, commit.events);
    if (commit.consumedUpTo > 0) this.inbox.consume(instanceId, commit.consumedUpTo);
    const finished = commit.status !== "Running" && commit.status !== "Pending";
    if (!finished) for (const id of commit.completedActivityIds) this.statements.deleteActivity.run(id);
    // A finished instance takes no more work; events that arrived during its last episode are dropped.
    if (finished) this.rows.deleteWork(instanceId);
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
    // A finished instance's timers are all gone with its work.
    if (!finished)
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
        this.inbox.add(instanceId, executionId, child.refused);
        notified.push(instanceId);
      }
    }
    if (commit.toParent && this.rows.tellParent(commit.toParent.link, commit.toParent.event)) {
      notified.push(commit.toParent.link.instanceId);
    }
    if (commit.continueAsNew) this.continueAsNew(commit.continueAsNew.row, commit.continueAsNew.started);
    const entities: string[] = [];
    for (const { entityId, request } of commit.entityRequests) {
      this.rows.addEntityRequest(entityId, request);
      if (!entities.includes(entityId)) entities.push(entityId);
    }
    return { activities, timers, children, notified, entities };
  }

  /** Starts a sub-orchestration; false, starting nothing, if an instance with its id is still active. */
  private startChild(child: ChildStart): boolean {
    const existing = this.rows.instance(child.row.instanceId);
    if (existing && isActive(existing.status)) return false;
    if (existing) this.rows.deleteEverything(child.row.instanceId);
    this.rows.writeInstance(child.row);
    this.inbox.add(child.row.instanceId, child.row.executionId, child.started);
    return true;
  }

  /**
   * Replaces a finished execution with a new one of the same instance: its history and outstanding
   * work go (its activities' results and its timers would mean nothing to the new one), while events
   * raised to the instance and not yet taken stay for the new execution, as under the extension.
   */
  private continueAsNew(row: InstanceRow, started: HistoryEvent): void {
    const { instanceId } = row;
    this.histories.delete(instanceId);
    this.statements.deleteActivities.run(instanceId);
    this.statements.deleteTimers.run(instanceId);
    this.inbox.keepRaised(instanceId);
    this.rows.writeInstance(row);
    this.inbox.add(instanceId, row.executionId, started);
  }
}
