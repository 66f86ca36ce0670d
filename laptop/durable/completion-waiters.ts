import { FINISHED_STATUSES, type OrchestrationStatus } from "../../src/ports/durable-client.js";
import type { DurableStore } from "./durable-store.js";
import { toStatus } from "./instance-status.js";
import type { InstanceRow } from "./store-records.js";

/** Callers waiting for instances to finish (Completed, Failed or Terminated). */
export class CompletionWaiters {
  private readonly waiters = new Map<string, ((status: OrchestrationStatus) => void)[]>();

  constructor(private readonly store: DurableStore) {}

  /** Resolves when the instance has finished; rejects if it has not within `timeoutMs`. */
  wait(instanceId: string, timeoutMs: number): Promise<OrchestrationStatus> {
    const row = this.store.instance(instanceId);
    if (row && FINISHED_STATUSES.includes(row.status)) return Promise.resolve(toStatus(row));
    return new Promise((resolve, reject) => {
      const timeout = setTimeout(
        () => reject(new Error(`instance ${instanceId} did not finish within ${timeoutMs} ms`)),
        timeoutMs,
      );
      timeout.unref();
      const waiters = this.waiters.get(instanceId) ?? [];
      waiters.push((status) => {
        clearTimeout(timeout);
        resolve(status);
      });
      this.waiters.set(instanceId, waiters);
    });
  }

  /** `committed`: the instance's row as just written, when the caller has it; read from the store otherwise. */
  notifyIfFinished(instanceId: string, committed?: InstanceRow): void {
    const waiters = this.waiters.get(instanceId);
    if (!waiters) return;
    const row = committed ?? this.store.instance(instanceId);
    if (!row || !FINISHED_STATUSES.includes(row.status)) return;
    this.waiters.delete(instanceId);
    const status = toStatus(row);
    for (const resolve of waiters) resolve(status);
  }
}
