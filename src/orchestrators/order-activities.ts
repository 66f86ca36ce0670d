import type { AgentRequest, AgentResponse } from "../domain/agent-messages.js";
import { orderTotalMinor } from "../domain/order.js";
import type { StateRecord } from "../domain/state-record.js";
import { type OrderStatus, STATUS_MESSAGE_SCHEMA_VERSION } from "../domain/status-message.js";
import { addMilliseconds, toInstant } from "../domain/time.js";
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
  type Advance,
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
  /** Called when an order leaves `Processing` for good, so the starter can admit the next one at once. */
  readonly onOrderSettled?: (orderId: string) => void;
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
    command: (record: StateRecord) => Command | readonly Command[],
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

  const startStep = (ref: AttemptRef, step: StepName, completeBy: string): Command => ({
    type: "startStep",
    instanceId: ref.instanceId,
    step,
    now: now(),
    completeBy,
    requestedCalls: deps.settings.agentCallsPerStep,
    amplification: deps.settings.agentAmplification,
  });

  /** What the orchestration needs to know of a step start: its allowance, or why it did not start. */
  const startOf = (outcome: UpdateOutcome, step: StepName): StepStart => {
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
  };

  const result = (outcome: UpdateOutcome): UpdateResult =>
    outcome.ok ? { ok: true } : { ok: false, detail: outcome.reason };

  return {
    [ACTIVITIES.beginAttempt]: async (
      input: AttemptRef & { firstDeadlineFrom: string },
    ): Promise<AttemptPlan> => {
      const ref: AttemptRef = { orderId: input.orderId, instanceId: input.instanceId };
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
      const pendingSteps = ORDER_STEPS.filter((step) => !completed.some((c) => c.step === step));
      // Reading the plan also starts the first pending step: one update fewer per attempt.
      const firstCompleteBy = addMilliseconds(input.firstDeadlineFrom, deps.settings.stepTimeoutMs);
      const first = pendingSteps[0];
      const firstStart: StepStart = first
        ? startOf(
            await apply(ref, () => startStep(ref, first, firstCompleteBy), "step.started", { step: first }),
            first,
          )
        : { ok: false, reason: "refused", detail: "no step left to start" };
      return {
        owned: true,
        pendingSteps,
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
        firstStart,
        firstCompleteBy,
        stepTimeoutMs: deps.settings.stepTimeoutMs,
        agentMode: deps.settings.agentMode,
        undoCalls: deps.settings.agentCallsPerStep,
      };
    },

    [ACTIVITIES.callAgent]: async (request: AgentRequest) => deps.agent(request),

    [ACTIVITIES.sendAgentRequest]: async (request: AgentRequest) => deps.sendAgentRequest(request),

    [ACTIVITIES.advance]: async (
      input: AttemptRef & {
        step: StepName | null;
        reference?: string | null;
        next: { step: StepName; completeBy: string } | null;
      },
    ): Promise<Advance> => {
      const { step, next } = input;
      const complete: Command[] = step
        ? [
            {
              type: "completeStep",
              instanceId: input.instanceId,
              step,
              now: now(),
              reference: input.reference ?? null,
            },
          ]
        : [];
      const then: Command = next
        ? startStep(input, next.step, next.completeBy)
        : { type: "finish", instanceId: input.instanceId, now: now() };
      const outcome = await apply(
        input,
        () => [...complete, then],
        next ? "step.advanced" : "order.processed",
        {
          step,
          reference: input.reference ?? null,
          next: next?.step ?? null,
        },
      );
      if (!outcome.ok) return { ok: false, detail: outcome.reason };
      if (!next) {
        if (outcome.laterRefusal) return { ok: false, detail: outcome.laterRefusal.message };
        if (outcome.changed) {
          await notify(outcome.record, "completed");
          deps.onOrderSettled?.(input.orderId);
        }
        return { ok: true, next: { ok: false, reason: "refused", detail: "the order is processed" } };
      }
      return { ok: true, next: startOf(outcome, next.step) };
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
        deps.onOrderSettled?.(input.orderId);
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
      if (outcome.ok && outcome.changed) {
        await notify(outcome.record, "compensating", input.failure.message);
        deps.onOrderSettled?.(input.orderId); // no longer Processing: its admission slot is free
      }
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
