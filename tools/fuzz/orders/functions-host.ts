import azureFunctions, { type InvocationContext } from "@azure/functions";
import type { Logger } from "../../../src/ports/logger.js";
import type { MessageQueue, ReceivedMessage } from "../../../src/ports/message-queue.js";
import { Violation } from "../violation.js";

/** A Service Bus trigger's function, as the app registers it: the message's body, then the invocation. */
export type TriggerFunction = (message: unknown, context: InvocationContext) => Promise<void>;

/** Logged when the function threw; the captured log reports it as a breakage. */
export const INVOCATION_FAILED = "host.invocation.failed";

/**
 * What the Functions host does with one message of a Service Bus queue in peek-lock mode: receives
 * it, calls the function with its body and trigger metadata, completes it when the function returns
 * and abandons it when it throws.
 */
export async function deliverOne(
  queue: MessageQueue,
  functionName: string,
  fn: TriggerFunction,
  logger: Logger,
): Promise<void> {
  const [message] = await queue.receive(1);
  if (!message) throw new Violation(`${queue.name} accepted a message and delivered none`);
  try {
    await fn(message.body, invocationOf(functionName, message));
  } catch (error) {
    logger.error(INVOCATION_FAILED, { functionName, messageId: message.messageId, error });
    await queue.abandon(message);
    return;
  }
  await queue.complete(message);
}

function invocationOf(functionName: string, message: ReceivedMessage): InvocationContext {
  return new azureFunctions.InvocationContext({
    invocationId: `fuzz-${message.sequenceNumber}-${message.deliveryCount}`,
    functionName,
    logHandler: () => {},
    triggerMetadata: {
      messageId: message.messageId,
      deliveryCount: message.deliveryCount,
      enqueuedTimeUtc: message.enqueuedTime.toISOString(),
      ...(message.correlationId === undefined ? {} : { correlationId: message.correlationId }),
      applicationProperties: { ...message.applicationProperties },
    },
  });
}
