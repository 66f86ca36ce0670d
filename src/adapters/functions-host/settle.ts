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
 * Deeper than this, a body is parked without its content. `JSON.stringify` recurses, and how deep it
 * can go depends on the stack already in use and on the Node.js version: a body that serialises here
 * may fail again inside the client's send. Orders nest three deep; nothing worth reading nests 256.
 */
export const MAX_PARKED_BODY_DEPTH = 256;

/**
 * The body to park: the message's own, or null when it cannot be serialised again safely (JSON nested
 * some thousands deep, which the sender's client wrote; a value `JSON.stringify` refuses), with why.
 * Sending it as it is would fail every delivery, and the message would never be parked with its reason.
 */
function parkable(body: JsonValue): { body: JsonValue; bodyDropped?: string } {
  if (nestedDeeperThan(body, MAX_PARKED_BODY_DEPTH)) {
    return {
      body: null,
      bodyDropped: `the body could not be serialised: it is nested more than ${MAX_PARKED_BODY_DEPTH} levels deep`,
    };
  }
  try {
    JSON.stringify(body);
    return { body };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { body: null, bodyDropped: `the body could not be serialised: ${reason}` };
  }
}

/** Whether arrays and objects in `value` nest more than `limit` deep, found with a stack of its own. */
function nestedDeeperThan(value: JsonValue, limit: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== "object" || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > limit) return true;
    for (const child of Object.values(next.value)) pending.push({ value: child, depth });
  }
  return false;
}
