import type { Delivery, Sender } from "rhea";
import type { DeadLetterInfo, QueueEntity, SubQueueKind } from "./entity.js";
import { failureOf, OperationNotAllowedError } from "./errors.js";
import { creditOf, forgetOnceSettled, OUTCOME } from "./rhea-internals.js";
import { deliveryTagOf, encodeMessage, lockTokenOfTag, optionalString, outgoingMessage } from "./wire.js";

export type Disposition = "accepted" | "released" | "modified" | "rejected";

interface RemoteState {
  readonly delivery_failed?: boolean;
  readonly undeliverable_here?: boolean;
  readonly message_annotations?: Record<string, unknown>;
  readonly error?: { readonly condition?: string; readonly info?: Record<string, unknown> };
}

/**
 * A receiver's link, seen from the broker: messages are locked and sent as credit allows, and each
 * disposition the receiver sends is answered by settling the delivery with the outcome, or with
 * `rejected` carrying the reason it failed (a lost lock above all).
 */
export class Consumer {
  private pumpScheduled = false;

  constructor(
    readonly sender: Sender,
    readonly entity: QueueEntity,
    private readonly kind: SubQueueKind,
  ) {}

  /**
   * Sends what the credit allows, on a later turn of the event loop: rhea takes credit off the link
   * only when it writes the transfers, so reading it after that keeps two pumps from overspending it.
   */
  schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * The receiver asked for its leftover credit back once available messages are sent. Called while
   * rhea handles the flow, so the flow that answers it goes out with that frame's processing.
   */
  drain(): void {
    this.pump();
    this.sender.set_drained(true);
  }

  settle(delivery: Delivery, disposition: Disposition): void {
    if (delivery.settled) return;
    const token = lockTokenOfTag(delivery.tag);
    const state = (delivery.remote_state ?? {}) as RemoteState;
    try {
      delivery.update(true, this.apply(token, disposition, state));
    } catch (error) {
      const { condition, description } = failureOf(error);
      delivery.update(true, OUTCOME.failed(condition, description));
    }
    forgetOnceSettled(delivery);
  }

  private apply(token: string, disposition: Disposition, state: RemoteState): unknown {
    switch (disposition) {
      case "accepted":
        this.entity.complete(this.kind, token);
        return OUTCOME.accepted();
      case "released":
        this.entity.abandon(this.kind, token);
        return OUTCOME.released();
      case "modified":
        // The SDK defers with undeliverable-here and abandons without it.
        if (state.undeliverable_here) throw new OperationNotAllowedError("deferral is not supported");
        this.entity.abandon(this.kind, token, state.message_annotations);
        return OUTCOME.modified({
          delivery_failed: state.delivery_failed ?? false,
          undeliverable_here: false,
        });
      case "rejected": {
        const { DeadLetterReason, DeadLetterErrorDescription, ...propertiesToModify } =
          state.error?.info ?? {};
        const info: DeadLetterInfo = {
          reason: optionalString(DeadLetterReason),
          description: optionalString(DeadLetterErrorDescription),
        };
        this.entity.deadLetter(this.kind, token, info, propertiesToModify);
        return OUTCOME.deadLettered();
      }
    }
  }

  private pump(): void {
    if (!this.sender.is_open()) return;
    const credit = creditOf(this.sender);
    if (credit <= 0) return;
    const source = this.kind === "deadLetter" ? this.entity.name : undefined;
    for (const stored of this.entity.lock(this.kind, credit)) {
      const lock = stored.lock as NonNullable<typeof stored.lock>;
      const message = outgoingMessage(stored, lock.lockedUntil, source);
      this.sender.send(encodeMessage(message), deliveryTagOf(lock.token), 0);
    }
  }
}
