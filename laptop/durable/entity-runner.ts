import { randomUUID } from "node:crypto";
import type { InvocationContext } from "@azure/functions";
import type { Clock } from "../../src/ports/clock.js";
import type { Logger } from "../../src/ports/logger.js";
import type { CapturedFunction } from "../worker/registration-capture.js";
import type { DurableStore, EntityBatch, EntityRequest, QueuedEntityRequest } from "./durable-store.js";
import { history } from "./history.js";

/** Operations of one entity given to its function at once, at most. */
const BATCH_SIZE = 50;
/** How long an entity whose batch could not be written waits before it is tried again. */
const RETRY_AFTER_MS = 1_000;

/** An entity's name and key, as the SDK's `EntityId` holds them. */
export interface EntityKey {
  readonly name: string;
  readonly key: string;
}

/** The scheduler id the SDK and the extension address an entity by: `@name@key`, the name in lower case. */
export function schedulerIdOf(entity: EntityKey): string {
  return `@${entity.name.toLowerCase()}@${entity.key}`;
}

export function entityKeyOf(schedulerId: string): EntityKey {
  const second = schedulerId.indexOf("@", 1);
  return { name: schedulerId.slice(1, second), key: schedulerId.slice(second + 1) };
}

/** What the SDK's entity wrapper returns for a batch. */
interface SdkEntityState {
  readonly entityExists: boolean;
  readonly entityState?: string;
  readonly results: readonly { readonly isError: boolean; readonly result?: string }[];
  readonly signals: readonly { readonly target: EntityKey; readonly name: string; readonly input?: string }[];
}

export interface EntityRunnerOptions {
  readonly store: DurableStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The app's entity functions (`df.app.entity`), by name in lower case. */
  readonly functions: ReadonlyMap<string, CapturedFunction>;
  readonly invocationContext: (fn: CapturedFunction) => InvocationContext;
  /** Whether a finished batch may still be written (not once the runtime halted or closed). */
  readonly mayCommit: () => boolean;
  /** Called after a batch was written, with the instances that got an answer. */
  readonly settled: (answered: readonly string[]) => void;
}

/**
 * Runs durable entities: each entity's waiting operations go to its function in order, one batch at
 * a time per entity (so operations on one entity never overlap), and each batch's new state, the
 * answers to its callers and the signals it sent are written in one transaction. A batch interrupted
 * by a crash runs again on the next open, as at-least-once work does elsewhere in this runtime.
 */
export class EntityRunner {
  private readonly pending = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();
  /** Entities whose last batch failed to be written, waiting to be tried again. */
  private readonly retrying = new Map<string, NodeJS.Timeout>();

  constructor(private readonly options: EntityRunnerOptions) {}

  queue(entityIds: Iterable<string>): void {
    for (const id of entityIds) this.pending.add(id);
  }

  /** Starts a batch for every entity with waiting operations that is not running one. */
  start(): void {
    for (const entityId of [...this.pending]) {
      if (this.running.has(entityId)) continue;
      this.pending.delete(entityId);
      const run = this.runBatch(entityId)
        .catch((error) => {
          // Its operations are still queued in the store: try again shortly rather than strand its callers.
          this.options.logger.error("durable.entity.batch.failed", { entityId, error });
          this.retryLater(entityId);
        })
        .finally(() => {
          this.running.delete(entityId);
          this.options.settled([]);
        });
      this.running.set(entityId, run);
    }
  }

  isIdle(): boolean {
    return this.pending.size === 0 && this.running.size === 0 && this.retrying.size === 0;
  }

  async close(): Promise<void> {
    this.stopRetries();
    await Promise.allSettled(this.running.values());
  }

  /** No more retries (the runtime halted): queued operations wait for the next open. */
  stopRetries(): void {
    for (const timer of this.retrying.values()) clearTimeout(timer);
    this.retrying.clear();
  }

  private retryLater(entityId: string): void {
    if (this.retrying.has(entityId) || !this.options.mayCommit()) return;
    const timer = setTimeout(() => {
      this.retrying.delete(entityId);
      this.pending.add(entityId);
      this.options.settled([]);
    }, RETRY_AFTER_MS);
    timer.unref();
    this.retrying.set(entityId, timer);
  }

  private async runBatch(entityId: string): Promise<void> {
    const { store, clock, logger } = this.options;
    const queued = store.entityRequests(entityId, BATCH_SIZE);
    const last = queued.at(-1);
    if (!last) return;
    const entity = entityKeyOf(entityId);
    const current = store.entity(entityId);
    const fn = this.options.functions.get(entity.name);
    const outcome = fn
      ? await this.invoke(fn, entity, current, queued)
      : refuseAll(queued, `no entity named ${entity.name} is registered`, current);
    if (!this.options.mayCommit()) return;
    const at = clock.now();
    const answers = queued.flatMap(({ request }, index) => {
      const result = outcome.results[index];
      if (result?.isError) {
        logger.warn("durable.entity.operation.failed", { entityId, operation: request.operation });
      }
      if (request.signal || !request.caller) return [];
      const answer = { result: result?.result, ...(result?.isError ? { exceptionType: "Error" } : {}) };
      return [{ caller: request.caller, event: history.eventRaised(at, request.id, JSON.stringify(answer)) }];
    });
    const batch: EntityBatch = {
      entityId,
      exists: outcome.entityExists,
      state: outcome.entityExists ? (outcome.entityState ?? null) : null,
      upToRowId: last.rowId,
      answers,
      signals: outcome.signals.map((signal) => ({
        entityId: schedulerIdOf(signal.target),
        request: { id: randomUUID(), operation: signal.name, signal: true, input: signal.input || null },
      })),
      at: at.getTime(),
    };
    const { notified, entities } = store.commitEntityBatch(batch);
    logger.debug("durable.entity.batch.completed", { entityId, operations: queued.length });
    // More may have been waiting than one batch takes, and signals may have gone to entities.
    this.queue(entities);
    if (store.entityRequests(entityId, 1).length > 0) this.pending.add(entityId);
    this.options.settled(notified);
  }

  private async invoke(
    fn: CapturedFunction,
    entity: EntityKey,
    current: { readonly state: string | null } | undefined,
    queued: readonly QueuedEntityRequest[],
  ): Promise<SdkEntityState> {
    const trigger = {
      self: entity,
      exists: current !== undefined,
      state: current?.state ?? undefined,
      batch: queued.map(({ request }) => batchItem(request)),
    };
    try {
      return (await fn.handler(trigger, this.options.invocationContext(fn))) as SdkEntityState;
    } catch (error) {
      // The SDK's wrapper catches each operation's error; one escaping it fails the whole batch.
      const reason = `entity ${entity.name} failed: ${error instanceof Error ? error.message : String(error)}`;
      return refuseAll(queued, reason, current);
    }
  }
}

function batchItem(request: EntityRequest) {
  return {
    id: request.id,
    name: request.operation,
    signal: request.signal,
    ...(request.input === null ? {} : { input: request.input }),
  };
}

/** Every call fails with `reason`; the entity's state stays as it was. */
function refuseAll(
  queued: readonly QueuedEntityRequest[],
  reason: string,
  current: { readonly state: string | null } | undefined,
): SdkEntityState {
  return {
    entityExists: current !== undefined,
    ...(current?.state ? { entityState: current.state } : {}),
    results: queued.map(() => ({ isError: true, result: JSON.stringify(reason) })),
    signals: [],
  };
}
