import type { HistoryEvent } from "./history.js";
import type { HistoryRows } from "./history-rows.js";
import type { InboxCache } from "./inbox-cache.js";
import { type EntityRequest, type InstanceRow, isActive } from "./store-records.js";
import { type StoreStatements, toInstance } from "./store-statements.js";

/** The row writes that several of the store's transactions are made of; none opens a transaction. */
export class StoreRows {
  constructor(
    private readonly statements: StoreStatements,
    private readonly inbox: InboxCache,
    private readonly histories: HistoryRows,
  ) {}

  instance(instanceId: string): InstanceRow | undefined {
    const row = this.statements.instance.get(instanceId);
    return row ? toInstance(row) : undefined;
  }

  /** Writes a new execution's row; its history starts empty. */
  writeInstance(row: Omit<InstanceRow, "output" | "failure" | "customStatus">): void {
    this.histories.startEmpty(row.instanceId);
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

  /** Gives a parent its child's result (or a caller an entity's answer), if the execution that asked still runs. */
  tellParent(link: { instanceId: string; executionId: string }, event: HistoryEvent): boolean {
    const parent = this.instance(link.instanceId);
    if (!parent || parent.executionId !== link.executionId || !isActive(parent.status)) return false;
    this.inbox.add(link.instanceId, link.executionId, event);
    return true;
  }

  addEntityRequest(entityId: string, request: EntityRequest): void {
    this.statements.addEntityRequest.run(entityId, JSON.stringify(request));
  }

  /** What an execution that ended leaves: no more work, and no more history rows to number. */
  deleteWork(instanceId: string): void {
    this.inbox.clear(instanceId);
    this.statements.deleteActivities.run(instanceId);
    this.statements.deleteTimers.run(instanceId);
    this.histories.forget(instanceId);
  }

  deleteEverything(instanceId: string): void {
    this.deleteWork(instanceId);
    this.histories.delete(instanceId);
  }
}
