import type { StoredStateRecord } from "../domain/state-record.js";
import { addMilliseconds, type IsoInstant, toInstant } from "../domain/time.js";
import { type AttemptInput, type StepName, workflowCan, workflowOf } from "../domain/workflow.js";
import type { Clock } from "../ports/clock.js";
import { type DurableClient, InstanceAlreadyRunningError } from "../ports/durable-client.js";
import type { Logger } from "../ports/logger.js";
import type { StateStore } from "../ports/state-store.js";
import { updateAsRead } from "../state/record-updates.js";
import {
  contextFrom,
  contextOf,
  globalTelemetry,
  inSpan,
  SpanKind,
  SpanStatusCode,
  type Telemetry,
  traceparentOf,
} from "../telemetry/telemetry.js";
import { CoalescedRuns } from "./coalesced-runs.js";

export interface StarterDeps {
  readonly states: StateStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly attemptTimeoutMs: number;
  /** Handed to each attempt (`AttemptInput.stepTimeoutMs`), so its first step needs no activity of its own. */
  readonly stepTimeoutMs?: number;
  readonly maxInFlight: number;
  readonly pageSize: number;
  /** How long a claim whose orchestration could not be started waits before it is claimed again. */
  readonly startRetryDelayMs: number;
  /** Where the claim and attempt spans go (default: the global providers). */
  readonly telemetry?: Telemetry;
}

export interface StarterReport {
  readonly claimed: number;
  /** Claims lost to another starter (or another writer) between the query and the update. */
  readonly lost: number;
  readonly started: number;
  /**
   * Orchestrations that could not be started. Their claims are given back (`Pending` again after
   * `startRetryDelayMs`, no failure counted); one the starter could not give back is recovered by the
   * Supervisor after `completeBy`, also without a failure, since the attempt started no step.
   */
  readonly startFailures: number;
  /** Why the starter stopped claiming: nothing left, the in-flight cap, or a start that failed. */
  readonly stoppedBy: "nothingClaimable" | "maxInFlight" | "startFailed";
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
    let stoppedBy: "startFailed" | undefined;
    while (room > 0) {
      const now = toInstant(deps.clock.now());
      const page = await deps.states.queryClaimable({
        now,
        maxItems: Math.min(deps.pageSize, room),
        continuationToken: token,
      });
      for (const record of page.items) {
        const outcome = await claimAndStart(deps, durable, record, now);
        if (outcome === "lost") {
          lost++;
          continue;
        }
        claimed++;
        room--;
        if (outcome === "started") {
          started++;
          continue;
        }
        startFailures++;
        // The durable backend is failing: stop claiming until the next run rather than churn.
        stoppedBy = "startFailed";
        break;
      }
      token = page.continuationToken;
      if (!token || stoppedBy) break;
    }
    const report: StarterReport = {
      claimed,
      lost,
      started,
      startFailures,
      stoppedBy: stoppedBy ?? (room <= 0 ? "maxInFlight" : "nothingClaimable"),
      inFlightBefore,
    };
    if (claimed > 0 || lost > 0) deps.logger.info("starter.run", { ...report });
    return report;
  };
}

/**
 * Claims one record and starts its attempt, in an `order.claim` span that joins the order's trace;
 * the attempt's own span (`order.attempt`, a child) is what the orchestration's input carries, so
 * the Agents' step spans become its children.
 */
async function claimAndStart(
  deps: StarterDeps,
  durable: DurableClient,
  record: StoredStateRecord,
  now: IsoInstant,
): Promise<"lost" | "started" | "startFailed"> {
  const tracer = (deps.telemetry ?? globalTelemetry()).tracer;
  return inSpan(
    tracer,
    "order.claim",
    {
      kind: SpanKind.INTERNAL,
      parent: contextFrom(record.traceparent),
      attributes: { "sas.order.id": record.orderId },
      clock: deps.clock,
    },
    async (span) => {
      const claim = await updateAsRead(deps.states, record, "starter", {
        type: "claim",
        now,
        attemptTimeoutMs: deps.attemptTimeoutMs,
      });
      span.setAttribute("sas.claim", claim.ok ? "claimed" : claim.reason);
      if (!claim.ok) return "lost";
      span.setAttribute("sas.attempt", claim.record.attempt);
      const attempt = {
        kind: SpanKind.INTERNAL,
        parent: contextOf(span),
        attributes: {
          "sas.order.id": record.orderId,
          "sas.attempt": claim.record.attempt,
          "sas.instance.id": claim.record.lockedBy ?? "",
        },
        clock: deps.clock,
      };
      const started = await inSpan(tracer, "order.attempt", attempt, async (attemptSpan) => {
        const ok = await startClaimed(deps, durable, claim.record, traceparentOf(attemptSpan));
        if (!ok)
          attemptSpan.setStatus({ code: SpanStatusCode.ERROR, message: "not started; claim given back" });
        return ok;
      });
      return started ? "started" : "startFailed";
    },
  );
}

/**
 * Starts the claimed attempt's orchestration. An instance already running under that id goes on by
 * itself; any other failure gives the claim back, so the outage is not counted against the order.
 */
async function startClaimed(
  deps: StarterDeps,
  durable: DurableClient,
  claimed: StoredStateRecord,
  traceparent: string | null,
): Promise<boolean> {
  const instanceId = claimed.lockedBy ?? "";
  const input: AttemptInput = {
    orderId: claimed.orderId,
    attempt: claimed.attempt,
    ...(traceparent ? { traceparent } : {}),
    ...(deps.stepTimeoutMs && workflowCan(claimed.workflowVersion, "recordsInAgent")
      ? firstStepOf(claimed, deps.stepTimeoutMs)
      : {}),
  };
  const fields = {
    orderId: claimed.orderId,
    attempt: claimed.attempt,
    instanceId,
    workflowVersion: claimed.workflowVersion,
  };
  try {
    // The order's own workflow version, whatever the default has become since it was accepted.
    await durable.startNew(workflowOf(claimed.workflowVersion).orchestration, { instanceId, input });
    deps.logger.info("starter.claimed", fields);
    return true;
  } catch (error) {
    if (error instanceof InstanceAlreadyRunningError) {
      deps.logger.warn("starter.start.alreadyRunning", { ...fields, error });
      return true;
    }
    const now = toInstant(deps.clock.now());
    const released = await updateAsRead(deps.states, claimed, "starter", {
      type: "releaseClaim",
      instanceId,
      now,
      retryAt: addMilliseconds(now, deps.startRetryDelayMs),
      reason: `the orchestration could not be started: ${error instanceof Error ? error.message : String(error)}`,
    });
    deps.logger.error("starter.start.failed", {
      ...fields,
      error,
      claim: released.ok ? "released" : `left to the Supervisor (${released.reason})`,
    });
    return false;
  }
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

/**
 * A forward attempt's first step and the step timeout, for its orchestration to time that step from the
 * start (`AttemptInput`). A compensation gets neither: it has the whole attempt's deadline.
 */
function firstStepOf(
  record: StoredStateRecord,
  stepTimeoutMs: number,
): { firstStep?: StepName; stepTimeoutMs?: number } {
  if (record.processState !== "Processing") return {};
  // The first step not completed: one in doubt runs again, as the attempt's plan says.
  const step = record.steps.find((s) => s.status !== "Completed");
  return step ? { firstStep: step.name, stepTimeoutMs } : {};
}
