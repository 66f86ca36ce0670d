import type { StateRecord } from "../../domain/state-record.js";
import { type OrderStatus, statusMessageFor } from "../../domain/status-message.js";
import { toInstant } from "../../domain/time.js";
import type { Command } from "../../domain/transition-commands.js";
import type { StepName } from "../../domain/workflow.js";
import type { AlertKind } from "../../ports/alerts.js";
import { type UpdateOutcome, updateRecord } from "../../state/record-updates.js";
import { contextFrom, globalTelemetry, SpanKind, startSpan } from "../../telemetry/telemetry.js";
import type { AttemptRef, StepStart, UpdateResult } from "../order-contracts.js";
import type { OrderActivityDeps } from "./deps.js";

export type RecordActions = ReturnType<typeof createRecordActions>;

/**
 * What every order activity does to the outside world: a fenced update of the record through the
 * transition table (logged either way), a status message to the submitter, an operator alert.
 */
export function createRecordActions(deps: OrderActivityDeps) {
  const now = () => toInstant(deps.clock.now());

  return {
    now,

    async apply(
      ref: AttemptRef,
      command: (record: StateRecord) => Command | readonly Command[],
      event: string,
      fields: Record<string, unknown> = {},
    ): Promise<UpdateOutcome> {
      const started = deps.clock.now();
      const outcome = await updateRecord(deps.states, ref.orderId, "orchestration", command);
      const log = deps.logger.child({ orderId: ref.orderId, instanceId: ref.instanceId, ...fields });
      if (outcome.ok) {
        log.info(event, { changed: outcome.changed, processState: outcome.record.processState });
        if (outcome.changed) traceTransition(deps, outcome.record, event, started, ref.instanceId);
      } else {
        const detail = "error" in outcome ? outcome.error.message : undefined;
        log.warn(`${event}.refused`, { reason: outcome.reason, detail });
      }
      return outcome;
    },

    async notify(record: StateRecord, status: OrderStatus, detail: string | null = null): Promise<void> {
      if (record.replyTo === null) return;
      await deps.notifier.notify(record.replyTo, statusMessageFor(record, status, now(), detail));
    },

    alert: (kind: AlertKind, orderId: string, reason: string) =>
      deps.alerts.raise({ kind, orderId, reason, at: now() }),

    startStep: (ref: AttemptRef, step: StepName, completeBy: string): Command => ({
      type: "startStep",
      instanceId: ref.instanceId,
      step,
      now: now(),
      completeBy,
      requestedCalls: deps.settings.agentCallsPerStep,
      amplification: deps.settings.agentAmplification,
    }),

    startOf,

    result: (outcome: UpdateOutcome): UpdateResult =>
      outcome.ok ? { ok: true } : { ok: false, detail: outcome.reason },
  };
}

/** What the orchestration needs to know of a step start: its allowance, or why it did not start. */
function startOf(outcome: UpdateOutcome, step: StepName): StepStart {
  const refusal = outcome.ok
    ? outcome.laterRefusal
    : outcome.reason === "refused"
      ? outcome.error
      : undefined;
  if (outcome.ok && !refusal) {
    return { ok: true, allowance: outcome.record.steps.find((s) => s.name === step)?.allowance ?? 0 };
  }
  if (refusal?.code === "budgetExhausted")
    return { ok: false, reason: "budgetExhausted", detail: refusal.message };
  if (refusal?.code === "notOwner") return { ok: false, reason: "notOwner", detail: refusal.message };
  return { ok: false, reason: "refused", detail: refusal?.message ?? (outcome.ok ? "" : outcome.reason) };
}

/**
 * A span for a change the activity made, in the order's trace. Its parent is read from the record
 * the update returned, so the span is written once the update is known: no activity input carries
 * the trace, and an update that changed nothing leaves no span.
 */
function traceTransition(
  deps: OrderActivityDeps,
  record: StateRecord,
  event: string,
  started: Date,
  instanceId: string,
): void {
  const tracer = (deps.telemetry ?? globalTelemetry()).tracer;
  const span = startSpan(tracer, event, {
    kind: SpanKind.INTERNAL,
    parent: contextFrom(record.traceparent),
    attributes: {
      "sas.order.id": record.orderId,
      "sas.attempt": record.attempt,
      "sas.instance.id": instanceId,
      "sas.process_state": record.processState,
    },
    startTime: started,
  });
  span.end(deps.clock.now());
}
