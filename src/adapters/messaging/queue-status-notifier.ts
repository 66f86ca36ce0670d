import { type StatusMessage, statusMessageId } from "../../domain/status-message.js";
import type { MessageQueue } from "../../ports/message-queue.js";
import type { StatusNotifier } from "../../ports/status-notifier.js";

/** Status messages onto the submitter's own queue, with stable ids so a resend is a duplicate. */
export class QueueStatusNotifier implements StatusNotifier {
  constructor(private readonly queueNamed: (name: string) => MessageQueue) {}

  async notify(replyTo: string, message: StatusMessage): Promise<void> {
    await this.queueNamed(replyTo).send({
      messageId: statusMessageId(message),
      body: { ...message },
      correlationId: message.orderId,
      subject: message.status,
    });
  }
}
