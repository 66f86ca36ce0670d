import { RETIRED_STATES } from "../domain/state-record.js";
import { addMilliseconds, type IsoInstant, toInstant } from "../domain/time.js";
import type { Clock } from "../ports/clock.js";
import type { DurableClient } from "../ports/durable-client.js";
import type { Logger } from "../ports/logger.js";
import type { RetentionStore } from "../ports/retention-store.js";
import type { StateStore } from "../ports/state-store.js";

const DAY_MS = 86_400_000;

export interface RetentionDeps {
  readonly states: RetentionStore;
  readonly durable: DurableClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly retentionDays: number;
  /** Records read and deleted per batch. */
  readonly batchSize: number;
  /** Batches per run; the next run continues with what is left. */
  readonly maxBatches: number;
}

export interface PurgeReport {
  /** Records last changed before this instant were due. */
  readonly before: IsoInstant;
  readonly records: number;
  readonly instances: number;
  readonly batches: number;
  /** The run stopped at `maxBatches` with records still due. */
  readonly truncated: boolean;
  readonly durationMs: number;
}

/** The instant before which a retired record's last change makes it due for deletion. */
export function retentionCutoff(now: Date, retentionDays: number): IsoInstant {
  return addMilliseconds(toInstant(now), -retentionDays * DAY_MS);
}

/** The orchestration instances an order's attempts may have started: `${orderId}:${n}`, n from 1. */
export function attemptInstanceIds(orderId: string, attempts: number): string[] {
  return Array.from({ length: attempts }, (_, i) => `${orderId}:${i + 1}`);
}

/**
 * Deletes `Processed` and `Compensated` records whose last change is older than the retention, with the
 * orchestration history of each of their attempts; `Error` and `CompensationFailed` records stay until an
 * operator's command ends them, and their clock starts then. The histories go first: a run that dies
 * between the two leaves the record, which the next run finds again, never a history nobody points at.
 * Every delete is conditional on the ETag read, so runs on several hosts at once delete each record once.
 */
export function createRetentionPurge(deps: RetentionDeps): () => Promise<PurgeReport> {
  return async () => {
    const started = performance.now();
    const before = retentionCutoff(deps.clock.now(), deps.retentionDays);
    let records = 0;
    let instances = 0;
    let batches = 0;
    let truncated = false;
    while (batches < deps.maxBatches) {
      const due = await deps.states.queryRetired({ before, maxItems: deps.batchSize });
      if (due.length === 0) break;
      batches++;
      for (const record of due) {
        for (const instanceId of attemptInstanceIds(record.orderId, record.attempt)) {
          if (await deps.durable.purge(instanceId)) instances++;
        }
        // The store keeps the order's tombstone with the delete: a resend is then a duplicate, not run again.
        if (await deps.states.remove(record.orderId, record.etag, toInstant(deps.clock.now()))) records++;
      }
      if (due.length < deps.batchSize) break;
      truncated = batches === deps.maxBatches;
      // The embedded stores answer synchronously: give the host's other work a turn between batches.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const report = { before, records, instances, batches, truncated, durationMs: elapsed(started) };
    deps.logger.info("retention.purge", { ...report });
    return report;
  };
}

export interface InstanceSweepDeps {
  readonly states: Pick<StateStore, "get">;
  readonly durable: DurableClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly retentionDays: number;
}

export interface SweepReport {
  readonly before: IsoInstant;
  /** Finished instances created before the cutoff that were looked at. */
  readonly examined: number;
  readonly instances: number;
  /** Kept because their order is in flight, parked for an operator, or retired too recently. */
  readonly kept: number;
  readonly durationMs: number;
}

/**
 * Where the store deletes records on its own (Cosmos DB's time to live), purges the orchestration
 * histories those records leave behind: every finished instance created before the cutoff whose order
 * has no record any more, or a retired one changed last before the cutoff. An instance of an order in
 * flight, in `Error` or in `CompensationFailed` is kept, so an operator still has its history.
 */
export function createInstanceSweep(deps: InstanceSweepDeps): () => Promise<SweepReport> {
  return async () => {
    const started = performance.now();
    const before = retentionCutoff(deps.clock.now(), deps.retentionDays);
    const finished = await deps.durable.listFinished({ createdBefore: new Date(before) });
    let instances = 0;
    let kept = 0;
    for (const instanceId of finished) {
      // Order attempts are `${orderId}:${attempt}`; an instance of anything else is not retention's.
      const orderId = instanceId.slice(0, Math.max(0, instanceId.lastIndexOf(":")));
      const record = orderId ? await deps.states.get(orderId) : undefined;
      const expired =
        orderId !== "" &&
        (record === undefined || (RETIRED_STATES.includes(record.processState) && record.updatedAt < before));
      if (expired && (await deps.durable.purge(instanceId))) instances++;
      else if (!expired) kept++;
    }
    const report = { before, examined: finished.length, instances, kept, durationMs: elapsed(started) };
    deps.logger.info("retention.instances", { ...report });
    return report;
  };
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
