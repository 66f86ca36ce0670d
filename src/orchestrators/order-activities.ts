import type { AgentRequest, AgentResponse } from "../domain/agent-messages.js";
import { orderTotalMinor } from "../domain/order.js";
import type { StateRecord } from "../domain/state-record.js";
import { type OrderStatus, STATUS_MESSAGE_SCHEMA_VERSION } from "../domain/status-message.js";
import { toInstant } from "../domain/time.js";
import type { Command, FailureInput } from "../domain/transitions.js";
import { ORDER_STEPS, type StepName } from "../domain/workflow.js";
import type { AlertKind, AlertSink } from "../ports/alerts.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { OrdersRepository } from "../ports/orders-repository.js";
import type { StateStore } from "../ports/state-store.js";
import type { StatusNotifier } from "../ports/status-notifier.js";
import { type UpdateOutcome, updateRecord } from "../state/record-updates.js";
import {
  ACTIVITIES,
  type AttemptPlan,
  type AttemptRef,
  type StepStart,
  type UpdateResult,
} from "./order-processing.js";

export interface OrderActivityDeps {
  readonly states: StateStore;
  readonly orders: OrdersRepository;
  readonly notifier: StatusNotifier;
  readonly alerts: AlertSink;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The Agent in its activity form. */
  readonly agent: (request: AgentRequest) => Promise<AgentResponse>;
  /** The Agent in its queue form: puts the request on the Agent's request queue. */
  readonly sendAgentRequest: (request: AgentRequest) => Promise<void>;
  readonly settings: {
    readonly stepTimeoutMs: number;
    readonly agentCallsPerStep: number;
    readonly agentAmplification: number;
    readonly agentMode: "activity" | "queue";
  };
}

type Handler = (input: never) => Promise<unknown>;

/**
 * The orchestration's activities: every read and write it needs, each a fenced update of the state
 * record through the transition table. Built from their dependencies so both hosts (and tests) wire
 * their own stores; the orchestrator only ever sees their results.
 */
export function createOrderActivities(
  deps: OrderActivityDeps,
): Record<(typeof ACTIVITIES)[keyof typeof ACTIVITIES], Handler> {
  const now = () => toInstant(deps.clock.now());

  const apply = async (
    ref: AttemptRef,
    command: (record: StateRecord) => Command,
    event: string,
    fields: Record<string, unknown> = {},
  ): Promise<UpdateOutcome> => {
    const outcome = await updateRecord(deps.states, ref.orderId, "orchestration", command);
    const log = deps.logger.child({ orderId: ref.orderId, instanceId: ref.instanceId, ...fields });
    if (outcome.ok) log.info(event, { changed: outcome.changed, processState: outcome.record.processState });
    else
      log.warn(`${event}.refused`, {
        reason: outcome.reason,
        detail: "error" in outcome ? outcome.error.message : undefined,
      });
    return outcome;
  };

  const notify = async (record: StateRecord, status: OrderStatus, detail: string | null = null) => {
    if (record.replyTo === null) return;
    await deps.notifier.notify(record.replyTo, {
      schemaVersion: STATUS_MESSAGE_SCHEMA_VERSION,
      orderId: record.orderId,
      status,
      attempt: record.attempt,
      at: now(),
      detail,
    });
  };

  const alert = (kind: AlertKind, orderId: string, reason: string) =>
    deps.alerts.raise({ kind, orderId, reason, at: now() });

  const result = (outcome: UpdateOutcome): UpdateResult =>
    outcome.ok ? { ok: true } : { ok: false, detail: outcome.reason };

  return {
    [ACTIVITIES.beginAttempt]: async (ref: AttemptRef): Promise<AttemptPlan> => {
      const record = await deps.states.get(ref.orderId);
      if (!record || record.lockedBy !== ref.instanceId || record.processState !== "Processing") {
        deps.logger.warn("attempt.notOwner", { ...ref, lockedBy: record?.lockedBy ?? null });
        return { owned: false };
      }
      const order = await deps.orders.get(ref.orderId);
      if (!order) throw new Error(`order ${ref.orderId} has a state record but no order row`);
      deps.logger.info("attempt.started", {
        ...ref,
        attempt: record.attempt,
        failureCount: record.failureCount,
      });
      await notify(record, "processing");
      const completed = record.compensationLog.map((entry) => ({
        step: entry.step,
        reference: entry.reference,
      }));
      return {
        owned: true,
        pendingSteps: ORDER_STEPS.filter((step) => !completed.some((c) => c.step === step)),
        completed,
        payloads: {
          reserveInventory: { items: order.items },
          chargePayment: {
            amountMinor: orderTotalMinor(order),
            currency: order.currency,
            customerId: order.customerId,
          },
          arrangeShipment: { customerId: order.customerId, items: order.items },
        },
        stepTimeoutMs: deps.settings.stepTimeoutMs,
        agentMode: deps.settings.agentMode,
        undoCalls: deps.settings.agentCallsPerStep,
      };
    },

    [ACTIVITIES.startStep]: async (
      input: AttemptRef & { step: StepName; completeBy: string },
    ): Promise<StepStart> => {
      const outcome = await apply(
        input,
        () => ({
          type: "startStep",
          instanceId: input.instanceId,
          step: input.step,
          now: now(),
          completeBy: input.completeBy,
          requestedCalls: deps.settings.agentCallsPerStep,
          amplification: deps.settings.agentAmplification,
        }),
        "step.started",
        { step: input.step, completeBy: input.completeBy },
      );
      if (outcome.ok) {
        const step = outcome.record.steps.find((s) => s.name === input.step);
        return { ok: true, allowance: step?.allowance ?? 0 };
      }
      if (outcome.reason === "refused" && outcome.error.code === "budgetExhausted") {
        return { ok: false, reason: "budgetExhausted", detail: outcome.error.message };
      }
      const notOwner = outcome.reason === "refused" && outcome.error.code === "notOwner";
      return { ok: false, reason: notOwner ? "notOwner" : "refused", detail: outcome.reason };
    },

    [ACTIVITIES.callAgent]: async (request: AgentRequest) => deps.agent(request),

    [ACTIVITIES.sendAgentRequest]: async (request: AgentRequest) => deps.sendAgentRequest(request),

    [ACTIVITIES.completeStep]: async (input: AttemptRef & { step: StepName; reference: string | null }) =>
      result(
        await apply(
          input,
          () => ({
            type: "completeStep",
            instanceId: input.instanceId,
            step: input.step,
            now: now(),
            reference: input.reference,
          }),
          "step.completed",
          { step: input.step, reference: input.reference },
        ),
      ),

    [ACTIVITIES.finish]: async (ref: AttemptRef) => {
      const outcome = await apply(
        ref,
        () => ({ type: "finish", instanceId: ref.instanceId, now: now() }),
        "order.processed",
      );
      if (outcome.ok && outcome.changed) await notify(outcome.record, "completed");
      return result(outcome);
    },

    [ACTIVITIES.fail]: async (input: AttemptRef & { failure: FailureInput }) => {
      const outcome = await apply(
        input,
        () => ({ type: "fail", instanceId: input.instanceId, now: now(), failure: input.failure }),
        "order.failed",
        { code: input.failure.code, step: input.failure.step },
      );
      if (outcome.ok && outcome.changed) {
        await alert("OrderFailed", input.orderId, `${input.failure.code}: ${input.failure.message}`);
        await notify(outcome.record, "failed", input.failure.message);
      }
      return result(outcome);
    },

    [ACTIVITIES.beginCompensation]: async (
      input: AttemptRef & { failure: FailureInput; completeBy: string },
    ) => {
      const outcome = await apply(
        input,
        () => ({
          type: "beginCompensation",
          instanceId: input.instanceId,
          now: now(),
          completeBy: input.completeBy,
          failure: input.failure,
        }),
        "compensation.started",
        { code: input.failure.code, step: input.failure.step },
      );
      if (outcome.ok && outcome.changed) await notify(outcome.record, "compensating", input.failure.message);
      return result(outcome);
    },

    [ACTIVITIES.compensateStep]: async (
      input: AttemptRef & { step: StepName; outcome: "compensated" | "failed"; failure: FailureInput | null },
    ) =>
      result(
        await apply(
          input,
          () => ({
            type: "compensateStep",
            instanceId: input.instanceId,
            step: input.step,
            now: now(),
            outcome: input.outcome,
            ...(input.failure ? { failure: input.failure } : {}),
          }),
          "compensation.step",
          { step: input.step, outcome: input.outcome },
        ),
      ),

    [ACTIVITIES.finishCompensation]: async (ref: AttemptRef) => {
      const outcome = await apply(
        ref,
        () => ({ type: "finishCompensation", instanceId: ref.instanceId, now: now() }),
        "compensation.finished",
      );
      if (!outcome.ok) return { state: "notOwner" };
      const state = outcome.record.processState;
      if (outcome.changed && state === "CompensationFailed") {
        await alert("CompensationFailed", ref.orderId, outcome.record.lastError?.message ?? "an undo failed");
      }
      if (outcome.changed)
        await notify(outcome.record, state === "Compensated" ? "compensated" : "compensationFailed");
      return { state };
    },
  } as Record<(typeof ACTIVITIES)[keyof typeof ACTIVITIES], Handler>;
}
