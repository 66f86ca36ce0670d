import type { HistoryEvent } from "./history.js";
import type { InboxEntry } from "./store-records.js";
import type { StoreStatements } from "./store-statements.js";

/**
 * The inbox as committed, per instance, oldest first: read on every episode, so it is kept in memory
 * rather than queried and parsed each time. Every inbox write goes through here, and each one changes
 * this copy only once its transaction has committed.
 */
export class InboxCache {
  private inboxes: Map<string, InboxEntry[]> | undefined;
  /** Changes to `inboxes` made by the transaction under way, applied when it commits. */
  private staged: ((inboxes: Map<string, InboxEntry[]>) => void)[] = [];

  constructor(private readonly statements: StoreStatements) {}

  entries(instanceId: string): InboxEntry[] {
    return [...(this.committed().get(instanceId) ?? [])];
  }

  /** Instances with events waiting, the one with the oldest event first. */
  instanceIds(): string[] {
    return [...this.committed().keys()];
  }

  add(instanceId: string, executionId: string, event: HistoryEvent): void {
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

  /** The entries up to `upTo` were fed to an episode: they are history now. */
  consume(instanceId: string, upTo: number): void {
    this.statements.consumeInbox.run(instanceId, upTo);
    this.stage((inboxes) => {
      const rest = inboxes.get(instanceId)?.filter((entry) => entry.id > upTo) ?? [];
      if (rest.length > 0) inboxes.set(instanceId, rest);
      else inboxes.delete(instanceId);
    });
  }

  /** Keeps only the events raised to the instance: what a new execution (`continueAsNew`) inherits. */
  keepRaised(instanceId: string): void {
    this.statements.deleteStaleInbox.run(instanceId);
    this.stage((inboxes) => {
      const raised = inboxes.get(instanceId)?.filter((entry) => entry.event.EventType === 15) ?? [];
      if (raised.length > 0) inboxes.set(instanceId, raised);
      else inboxes.delete(instanceId);
    });
  }

  clear(instanceId: string): void {
    this.statements.deleteInbox.run(instanceId);
    this.stage((inboxes) => inboxes.delete(instanceId));
  }

  /** A transaction begins: the committed copy is loaded first, if it was not yet. */
  begin(): void {
    this.committed();
    this.staged = [];
  }

  /** The transaction committed: its changes reach the copy. */
  commit(): void {
    const inboxes = this.committed();
    for (const change of this.staged) change(inboxes);
  }

  /** The transaction is over, committed or not. */
  end(): void {
    this.staged = [];
  }

  private committed(): Map<string, InboxEntry[]> {
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
}
