/** The shapes the durable store reads and writes: instances, their work, entities, and an episode's commit. */
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

export function isActive(status: RuntimeStatus): boolean {
  return status === "Pending" || status === "Running";
}
