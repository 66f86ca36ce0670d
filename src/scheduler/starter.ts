import { toInstant } from "../domain/time.js";
import type { AttemptInput } from "../domain/workflow.js";
import type { Clock } from "../ports/clock.js";
import { type DurableClient, InstanceAlreadyRunningError } from "../ports/durable-client.js";
import type { Logger } from "../ports/logger.js";
import type { StateStore } from "../ports/state-store.js";
import { updateAsRead } from "../state/record-updates.js";
import { CoalescedRuns } from "./coalesced-runs.js";

export interface StarterDeps {
  readonly states: StateStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly orchestrationName: string;
  readonly attemptTimeoutMs: number;
  readonly maxInFlight: number;
  readonly pageSize: number;
}

export interface StarterReport {
  readonly claimed: number;
  /** Claims lost to another starter (or another writer) between the query and the update. */
  readonly lost: number;
  readonly started: number;
  /** Orchestrations that could not be started; the Supervisor recovers these records after `completeBy`. */
  readonly startFailures: number;
  /** Why the starter stopped claiming: nothing left, or the in-flight cap. */
  readonly stoppedBy: "nothingClaimable" | "maxInFlight";
  readonly inFlightBefore: number;
}

/**
 * The starter: claims claimable `Pending` records, oldest first, each by one conditional update that
 * sets `Processing`, `lockedBy` = `${orderId}:${attempt}` and `completeBy`; then starts that attempt's
 * orchestration. A crash after the claim and before the start leaves a record whose `completeBy`
 * expires, which the Supervisor recovers. Admission control: it claims nothing once `maxInFlight`
 * records are `Processing`. The durable client is the one of the invocation that runs it.
 */
export function createStarter(deps: StarterDeps): (durable: DurableClient) => Promise<StarterReport> {
  return async (durable) => {
    const inFlightBefore = await deps.states.countProcessing();
    let room = deps.maxInFlight - inFlightBefore;
    let claimed = 0;
    let lost = 0;
    let started = 0;
    let startFailures = 0;
    let token: string | null = null;
    while (room > 0) {
      const now = toInstant(deps.clock.now());
      const page = await deps.states.queryClaimable({
        now,
        maxItems: Math.min(deps.pageSize, room),
        continuationToken: token,
      });
      for (const record of page.items) {
        const claim = await updateAsRead(deps.states, record, "starter", {
          type: "claim",
          now,
          attemptTimeoutMs: deps.attemptTimeoutMs,
        });
        if (!claim.ok) {
          lost++;
          continue;
        }
        claimed++;
        room--;
        const instanceId = claim.record.lockedBy ?? "";
        const input: AttemptInput = { orderId: record.orderId, attempt: claim.record.attempt };
        try {
          await durable.startNew(deps.orchestrationName, { instanceId, input });
          started++;
          deps.logger.info("starter.claimed", {
            orderId: record.orderId,
            attempt: input.attempt,
            instanceId,
          });
        } catch (error) {
          startFailures++;
          const level = error instanceof InstanceAlreadyRunningError ? "warn" : "error";
          deps.logger[level]("starter.start.failed", { orderId: record.orderId, instanceId, error });
        }
      }
      token = page.continuationToken;
      if (!token) break;
    }
    const report: StarterReport = {
      claimed,
      lost,
      started,
      startFailures,
      stoppedBy: room <= 0 ? "maxInFlight" : "nothingClaimable",
      inFlightBefore,
    };
    if (claimed > 0 || lost > 0) deps.logger.info("starter.run", { ...report });
    return report;
  };
}

/** Asks for a starter run with this durable client; resolves when a run that covers the request ends. */
export type NudgeStarter = (durable: DurableClient) => Promise<void>;

/**
 * The starter as each host drives it: one run at a time per process, however many timers and nudges
 * ask. A nudge never rejects: a failed run is logged, and the next timer tick runs it again.
 */
export function createStarterRuns(deps: StarterDeps, stopped?: () => boolean) {
  const runs = new CoalescedRuns(createStarter(deps), stopped);
  const nudge: NudgeStarter = (durable) =>
    runs.trigger(durable).catch((error: unknown) => deps.logger.error("starter.error", { error }));
  return {
    nudge,
    /** The runs in progress, if any. */
    get running(): Promise<void> | undefined {
      return runs.running;
    },
  };
}
