import { extendedDeadline, millisecondsPast } from "../domain/deadline-rules.js";
import type { StateRecord } from "../domain/state-record.js";
import type { IsoInstant } from "../domain/time.js";
import type { OrchestrationStatus } from "../ports/durable-client.js";

/** What a lookup answers when it cannot ask at all (no durable client): nobody can tell what became of the attempt. */
export interface CannotJudge {
  readonly cannotJudge: string;
}

/**
 * Reads an attempt's orchestration by instance id (the record's `lockedBy`); undefined when there is none,
 * `CannotJudge` when there is nothing to ask it with.
 */
export type OrchestrationLookup = (
  instanceId: string,
) => Promise<OrchestrationStatus | undefined | CannotJudge>;

/** The lookup of a Supervisor run that has no durable client: every expiry it meets is left unjudged (F24-9). */
export function cannotJudge(reason: string): OrchestrationLookup {
  return async () => ({ cannotJudge: reason });
}

/**
 * How the Supervisor tells a host's downtime from an attempt that ran out of time. An orchestration
 * races each step's Agent against a durable timer at the step's deadline; while its host is down
 * neither runs. So an expired attempt whose orchestration is still running was held up by its host,
 * and one whose timer fired long after the deadline had nobody running it when the deadline came.
 */
export interface InterruptionPolicy {
  readonly lookup: OrchestrationLookup;
  /** A timer this late, or a running orchestration this far past the deadline, means the host was down. */
  readonly lateTimerMs: number;
  /** How long a still-running attempt is given again. */
  readonly extensionMs: number;
}

export type ExpiryVerdict =
  /** Ran out of time on a running host, or nothing tells otherwise: today's recovery, charged. */
  | { readonly kind: "expired" }
  /** Its orchestration is running but only just past the deadline: it is about to time itself out. */
  | { readonly kind: "wait" }
  | { readonly kind: "stillRunning"; readonly completeBy: IsoInstant; readonly reason: string }
  | { readonly kind: "interrupted"; readonly reason: string }
  /**
   * Its orchestration could not be asked about (no durable client): not evidence that the attempt ran
   * out of time, so nothing is charged; the record is left for a scan that can ask (F24-9).
   */
  | { readonly kind: "unjudged"; readonly reason: string }
  /**
   * An operator suspended its orchestration: it neither runs nor has ended, and an operator is deciding
   * about it. Left alone until they resume it (it then times its step out itself, or goes on) or
   * terminate it (the next scan recovers it as usual).
   */
  | { readonly kind: "suspended"; readonly reason: string };

const EXPIRED: ExpiryVerdict = { kind: "expired" };

export async function judgeExpiry(
  record: StateRecord,
  now: IsoInstant,
  policy: InterruptionPolicy,
): Promise<ExpiryVerdict> {
  if (record.lockedBy === null || record.completeBy === null) return EXPIRED;
  const status = await policy.lookup(record.lockedBy);
  if (!status) return EXPIRED;
  if ("cannotJudge" in status) return { kind: "unjudged", reason: status.cannotJudge };
  const pastMs = millisecondsPast(record.completeBy, now);
  if (status.runtimeStatus === "Suspended") {
    return { kind: "suspended", reason: `its orchestration was suspended ${pastMs} ms past the deadline` };
  }
  if (status.runtimeStatus === "Running" || status.runtimeStatus === "Pending") {
    if (pastMs < policy.lateTimerMs) return { kind: "wait" };
    return {
      kind: "stillRunning",
      completeBy: extendedDeadline(now, policy.extensionMs),
      reason: `its orchestration is still ${status.runtimeStatus} ${pastMs} ms past the deadline`,
    };
  }
  const lateByMs = timedOutLateBy(status);
  if (lateByMs !== undefined && lateByMs >= policy.lateTimerMs) {
    return {
      kind: "interrupted",
      reason: `its orchestration's timer fired ${lateByMs} ms after the deadline: its host was not running it`,
    };
  }
  return EXPIRED;
}

/** How late a `timedOut` attempt saw its deadline (order-processing.ts), or undefined for any other end. */
function timedOutLateBy(status: OrchestrationStatus): number | undefined {
  if (status.runtimeStatus !== "Completed") return undefined;
  const output = status.output as { outcome?: unknown; lateByMs?: unknown } | null | undefined;
  if (output?.outcome !== "timedOut" || typeof output.lateByMs !== "number") return undefined;
  return output.lateByMs;
}
