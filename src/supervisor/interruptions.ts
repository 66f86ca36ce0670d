import type { StateRecord } from "../domain/state-record.js";
import { addMilliseconds, type IsoInstant } from "../domain/time.js";
import type { OrchestrationStatus } from "../ports/durable-client.js";

/** Reads an attempt's orchestration by instance id (the record's `lockedBy`); undefined when there is none. */
export type OrchestrationLookup = (instanceId: string) => Promise<OrchestrationStatus | undefined>;

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
  | { readonly kind: "interrupted"; readonly reason: string };

const EXPIRED: ExpiryVerdict = { kind: "expired" };

export async function judgeExpiry(
  record: StateRecord,
  now: IsoInstant,
  policy: InterruptionPolicy,
): Promise<ExpiryVerdict> {
  if (record.lockedBy === null || record.completeBy === null) return EXPIRED;
  const status = await policy.lookup(record.lockedBy);
  if (!status) return EXPIRED;
  const pastMs = Date.parse(now) - Date.parse(record.completeBy);
  if (status.runtimeStatus === "Running" || status.runtimeStatus === "Pending") {
    if (pastMs < policy.lateTimerMs) return { kind: "wait" };
    return {
      kind: "stillRunning",
      completeBy: addMilliseconds(now, policy.extensionMs),
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
