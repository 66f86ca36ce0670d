import type { QueueReceiver, ReceivedMessage } from "../../src/ports/message-queue.js";
import type { DeadLetter } from "./orders/judge.js";

/**
 * Reads what arrived on a dead-letter (or parking) queue since the last read, by peeking from the
 * sequence number after the last message seen; nothing is received, so nothing is settled.
 */
export class DeadLetterCursor {
  private next = 0;

  constructor(
    private readonly receiver: QueueReceiver,
    private readonly reasonOf: (message: ReceivedMessage) => DeadLetter = deadLetterOf,
  ) {}

  async newMessages(): Promise<DeadLetter[]> {
    const found: DeadLetter[] = [];
    for (;;) {
      const batch = await this.receiver.peek(100, this.next);
      for (const message of batch) {
        found.push(this.reasonOf(message));
        this.next = message.sequenceNumber + 1;
      }
      if (batch.length < 100) return found;
    }
  }
}

/** A message the queue dead-lettered: its reason and description as the broker keeps them. */
export function deadLetterOf(message: ReceivedMessage): DeadLetter {
  return { reason: message.deadLetterReason ?? "", description: message.deadLetterErrorDescription ?? "" };
}
