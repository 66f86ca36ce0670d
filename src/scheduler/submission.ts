import { orderDifferences, orderFromMessage, parseOrderMessage } from "../domain/order.js";
import { newPendingRecord, type ProcessState } from "../domain/state-record.js";
import { type OrderStatus, statusMessageFor } from "../domain/status-message.js";
import { toInstant } from "../domain/time.js";
import type { AlertSink } from "../ports/alerts.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import {
  COMPLETE,
  type InboundMessage,
  type MessageDisposition,
  type MessageHandler,
} from "../ports/message-handler.js";
import type { OrdersRepository } from "../ports/orders-repository.js";
import type { CreateResult, RetiredOrder, StateStore } from "../ports/state-store.js";
import type { StatusNotifier } from "../ports/status-notifier.js";
import {
  contextFrom,
  globalTelemetry,
  inSpan,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Telemetry,
  traceparentOf,
} from "../telemetry/telemetry.js";

export interface SubmissionDeps {
  readonly orders: OrdersRepository;
  readonly states: StateStore;
  readonly notifier: StatusNotifier;
  readonly alerts: AlertSink;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly retryBudgetPerOrder: number;
  /** Calls of the budget kept for compensation (see PipelineSettings.undoReservePerOrder). */
  readonly undoReservePerOrder: number;
  /** The workflow version accepted orders are pinned to (the WORKFLOW_VERSION setting). */
  readonly workflowVersion: number;
  /** Called after an order is accepted, so the starter claims it without waiting for its timer. */
  readonly onAccepted?: (orderId: string) => void;
  /** Where the submission's span goes (default: the global providers). */
  readonly telemetry?: Telemetry;
}

export const DEAD_LETTER_REASONS = {
  invalid: "InvalidOrderMessage",
  conflict: "ConflictingOrder",
} as const;

/** The status a finished order last sent its submitter, by the state it ended in. */
const FINAL_STATUS: Partial<Record<ProcessState, OrderStatus>> = {
  Processed: "completed",
  Compensated: "compensated",
};

/**
 * Submission: the orders queue's handler. Two writes that share no transaction (the order, then its
 * state record), each idempotent by `orderId`: a message redelivered after a crash between them finds
 * the first write done and makes the second. An existing order or record is accepted only if its
 * immutable data match; otherwise the message is dead-lettered and nothing is overwritten.
 *
 * An order whose record retention deleted has a tombstone instead (`StateStore.getRetired`): a resend of
 * it is a duplicate of a finished order, completed with no record created and nothing run. It is looked
 * for only when no record exists, and before one is created: the record is read first, so a record that
 * retention deletes meanwhile is either read or leaves its tombstone to be found.
 */
export function createSubmissionHandler(deps: SubmissionDeps): MessageHandler {
  const reject = async (
    reason: (typeof DEAD_LETTER_REASONS)[keyof typeof DEAD_LETTER_REASONS],
    description: string,
    message: InboundMessage,
    orderId: string | null,
  ): Promise<MessageDisposition> => {
    deps.logger.warn("submission.rejected", { messageId: message.messageId, orderId, reason, description });
    await deps.alerts.raise({
      kind: reason === DEAD_LETTER_REASONS.invalid ? "InvalidMessage" : "ConflictingOrder",
      orderId,
      reason: description,
      at: toInstant(deps.clock.now()),
    });
    return { action: "deadLetter", reason, description };
  };

  const handle = async (message: InboundMessage, span: Span): Promise<MessageDisposition> => {
    const parsed = parseOrderMessage(message.body);
    if (!parsed.ok) return reject(DEAD_LETTER_REASONS.invalid, parsed.error.message, message, null);
    const orderMessage = parsed.value;
    const order = orderFromMessage(orderMessage);
    const replyTo = orderMessage.replyTo ?? null;
    const log = deps.logger.child({ orderId: order.orderId, messageId: message.messageId });
    span.setAttribute("sas.order.id", order.orderId);

    const inserted = await deps.orders.insertIfAbsent(order);
    if (!inserted.inserted) {
      const differences = orderDifferences(inserted.existing, order);
      if (differences.length > 0) {
        const description = `order ${order.orderId} exists with different ${differences.join(", ")}`;
        return reject(DEAD_LETTER_REASONS.conflict, description, message, order.orderId);
      }
    }

    const now = toInstant(deps.clock.now());
    const record = newPendingRecord({
      order,
      replyTo,
      now,
      retryBudgetLimit: deps.retryBudgetPerOrder,
      undoReserve: deps.undoReservePerOrder,
      workflowVersion: deps.workflowVersion,
      traceparent: traceparentOf(span),
    });
    const existing = await deps.states.get(order.orderId);
    const retired = existing ? undefined : await deps.states.getRetired(order.orderId);
    if (retired && retired.replyTo !== undefined && retired.replyTo !== replyTo) {
      // As for a live order: the final status goes only to the queue the order was accepted with (F24-8).
      const description = `order ${order.orderId} finished (${retired.finalState}) with a different replyTo (${retired.replyTo ?? "none"})`;
      return reject(DEAD_LETTER_REASONS.conflict, description, message, order.orderId);
    }
    if (retired) return answerRetired(deps, retired, replyTo, log);
    const created: CreateResult = existing
      ? { created: false, existing }
      : await deps.states.createIfAbsent(record);
    if (!created.created && created.existing.replyTo !== replyTo) {
      const description = `order ${order.orderId} exists with a different replyTo (${created.existing.replyTo ?? "none"})`;
      return reject(DEAD_LETTER_REASONS.conflict, description, message, order.orderId);
    }

    if (created.created) {
      log.info("submission.accepted", { replyTo, orderWritten: inserted.inserted });
    } else {
      log.info("submission.duplicate", { processState: created.existing.processState });
    }
    if (replyTo !== null) {
      // A stable message id: a redelivered submission sends no second "received".
      await deps.notifier.notify(
        replyTo,
        statusMessageFor({ orderId: order.orderId, attempt: 0 }, "received", now, null),
      );
    }
    deps.onAccepted?.(order.orderId);
    return COMPLETE;
  };

  return traced(deps, handle);
}

/**
 * A resend of an order retention retired, naming the `replyTo` the order was accepted with: completed,
 * neither dead-lettered (it is valid) nor alerted (no one has anything to do), and no starter nudged. The
 * submitter, if it names a `replyTo`, is sent the status the order finished with, as it was sent then
 * (same attempt, so the same message id): a resend this late most likely means the submitter never
 * learnt the outcome, and a "received" would promise statuses that will never come. A submitter that had
 * it already sees a message id it has seen. A tombstone written before tombstones kept the `replyTo`
 * cannot tell whose queue a resend names: it is completed with nothing sent (`replyToUnknown`).
 */
async function answerRetired(
  deps: SubmissionDeps,
  retired: RetiredOrder,
  replyTo: string | null,
  log: SubmissionDeps["logger"],
): Promise<MessageDisposition> {
  const { finalState, retiredAt, purgedAt, attempt } = retired;
  const replyToUnknown = retired.replyTo === undefined;
  log.info("submission.duplicateOfRetired", {
    finalState,
    retiredAt,
    purgedAt,
    attempt,
    replyTo,
    ...(replyToUnknown ? { replyToUnknown } : {}),
  });
  const status = FINAL_STATUS[finalState];
  if (replyTo !== null && status !== undefined && !replyToUnknown) {
    await deps.notifier.notify(
      replyTo,
      statusMessageFor({ orderId: retired.orderId, attempt }, status, retiredAt, null),
    );
  }
  return COMPLETE;
}

/**
 * Each delivery in an `order.submit` span that joins the trace its sender started (the `traceparent`
 * application property); the record keeps the span's own, so the order's later work joins it too.
 */
function traced(
  deps: SubmissionDeps,
  handle: (message: InboundMessage, span: Span) => Promise<MessageDisposition>,
): MessageHandler {
  return (message) =>
    inSpan(
      (deps.telemetry ?? globalTelemetry()).tracer,
      "order.submit",
      {
        kind: SpanKind.CONSUMER,
        parent: contextFrom(String(message.applicationProperties.traceparent ?? "")),
        attributes: { "messaging.operation.type": "process", "messaging.message.id": message.messageId },
        clock: deps.clock,
      },
      async (span) => {
        const disposition = await handle(message, span);
        if (disposition.action === "deadLetter") {
          span.setAttribute("sas.dead_letter.reason", disposition.reason);
          span.setStatus({ code: SpanStatusCode.ERROR, message: disposition.reason });
        }
        return disposition;
      },
    );
}
