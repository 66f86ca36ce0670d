import type { Logger } from "../../ports/logger.js";
import type { InboundMessage, MessageDisposition, MessageHandler } from "../../ports/message-handler.js";
import type { JsonValue, MessageQueue } from "../../ports/message-queue.js";

/**
 * Runs a queue handler under the Functions Service Bus trigger and carries out its disposition.
 *
 * The trigger completes a message when the function returns and abandons it when it throws; it offers
 * no dead-letter action to Node.js functions without a preview extension. So a message the handler
 * refuses is moved, not dead-lettered: it is sent to the invalid-messages queue with the reason, the
 * description and its source queue as application properties, and then completed. The send comes
 * first, so a crash in between delivers the message again and the move is repeated under the same
 * message id, which duplicate detection drops. A handler that throws is abandoned and redelivered,
 * and the broker dead-letters it past the queue's maximum delivery count.
 */
export async function runQueueHandler(
  handler: MessageHandler,
  message: InboundMessage,
  deps: { readonly sourceQueue: string; readonly invalidMessages: MessageQueue; readonly logger: Logger },
): Promise<MessageDisposition> {
  const disposition = await handler(message);
  if (disposition.action === "deadLetter") {
    const { body, bodyDropped } = parkable(message.body);
    await deps.invalidMessages.send({
      messageId: `${deps.sourceQueue}:${message.messageId}`.slice(0, 128),
      body,
      ...(message.correlationId ? { correlationId: message.correlationId } : {}),
      applicationProperties: {
        ...message.applicationProperties,
        sourceQueue: deps.sourceQueue,
        sourceMessageId: message.messageId,
        DeadLetterReason: disposition.reason,
        DeadLetterErrorDescription: disposition.description.slice(0, 4096),
        ...(bodyDropped ? { bodyDropped } : {}),
      },
    });
    deps.logger.warn("message.parked", {
      queue: deps.sourceQueue,
      messageId: message.messageId,
      reason: disposition.reason,
    });
  }
  return disposition;
}

/**
 * The body to park: the message's own, or null when it cannot be serialised again (JSON nested some
 * thousands deep, which the sender's client wrote but JSON.stringify gives up on), with why. Sending
 * it as it is would fail every delivery, and the message would never be parked with its reason.
 */
function parkable(body: JsonValue): { body: JsonValue; bodyDropped?: string } {
  try {
    JSON.stringify(body);
    return { body };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { body: null, bodyDropped: `the body could not be serialised: ${reason}` };
  }
}
