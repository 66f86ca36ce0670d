import type { Logger } from "../../src/ports/logger.js";
import type { HistoryEvent, RecordedTask } from "./history.js";
import type { ReplaySession } from "./replay-session.js";
import type { InstanceRow } from "./store-records.js";

/** An activity's result, waiting for its instance's next episode. */
export interface Completion {
  readonly activityId: number;
  readonly executionId: string;
  readonly event: HistoryEvent;
}

/**
 * What the runtime keeps in memory of each active execution, so that an episode need not read it back:
 * the instance, its history and tasks as committed, its replay session, and the activity results not
 * yet in its history.
 */
export class ActiveExecutions {
  /**
   * What replay needs of each instance (name, input, execution); fixed for an execution's lifetime.
   * Only active executions are here: forget() drops an instance when it ends, so being here means
   * active. The client's calls rely on that to skip reading the instance back, and queued work or a
   * result of any other execution (one that ended, or was replaced by a new start) is dropped when
   * its turn comes, instead of filtering the queue.
   */
  readonly instances = new Map<string, InstanceRow>();
  /** Histories of running instances, as committed: the store is written through, never re-read. */
  readonly histories = new Map<string, HistoryEvent[]>();
  /** The tasks each of those histories scheduled, kept with it so an episode need not scan it again. */
  readonly recorded = new Map<string, RecordedTask[]>();
  /**
   * Activity results not yet in a history, per instance, in the order they came. The instance's next
   * episode takes them as new events and its commit deletes their work rows in the same transaction,
   * so a result costs no write of its own. A crash before that commit loses the result but not the
   * work row: the activity runs again on the next open, as one interrupted by the crash would.
   */
  readonly completions = new Map<string, Completion[]>();
  /** Running orchestrations kept between episodes, when `replaySessions` is on. */
  readonly sessions = new Map<string, ReplaySession>();

  constructor(private readonly logger: Logger) {}

  /** Holds a new execution, as committed: its history is empty. */
  hold(row: InstanceRow): void {
    this.instances.set(row.instanceId, row);
    this.histories.set(row.instanceId, []);
    this.recorded.set(row.instanceId, []);
  }

  /** Drops what is cached or queued for an instance whose execution ended or is being replaced. */
  forget(instanceId: string): void {
    this.histories.delete(instanceId);
    this.sessions.delete(instanceId);
    this.instances.delete(instanceId);
    this.recorded.delete(instanceId);
    const dropped = this.completions.get(instanceId)?.length ?? 0;
    this.completions.delete(instanceId);
    if (dropped > 0) this.logger.info("durable.activity.result.dropped", { instanceId, count: dropped });
  }

  /**
   * The results waiting for the instance's current execution; those of an execution that ended or was
   * replaced meanwhile (its work rows are gone with it) are dropped here.
   */
  completionsFor(instanceId: string): Completion[] {
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

  /** The first `count` results of the instance are in its history now. */
  takeCompletions(instanceId: string, count: number): void {
    if (count === 0) return;
    const rest = this.completions.get(instanceId)?.slice(count) ?? [];
    if (rest.length > 0) this.completions.set(instanceId, rest);
    else this.completions.delete(instanceId);
  }

  /**
   * The instance's session, taken out of the cache, if sessions are on and it has seen exactly the
   * committed history (an episode whose commit failed leaves its session behind that history).
   */
  takeSession(instanceId: string, historyLength: number): ReplaySession | undefined {
    const session = this.sessions.get(instanceId);
    this.sessions.delete(instanceId);
    return session?.historyLength === historyLength ? session : undefined;
  }
}
