import type { InvocationContext } from "@azure/functions";
import { inboundFromTrigger } from "../../adapters/functions-host/inbound-message.js";
import { runQueueHandler } from "../../adapters/functions-host/settle.js";
import { QUEUE_NAMES } from "../../config/names.js";
import type { InboundMessage, MessageDisposition } from "../../ports/message-handler.js";
import { countingRefusals } from "../../telemetry/refusals.js";
import { type AzureServices, telemetryOf } from "../azure-services.js";

/**
 * A Service Bus trigger's handler around a queue handler: refused messages are parked with their
 * reason. The handler also gets the invocation, for the bindings it reads (the durable client).
 */
export function queueTrigger(
  services: AzureServices,
  sourceQueue: string,
  handler: (message: InboundMessage, context: InvocationContext) => Promise<MessageDisposition>,
): (message: unknown, context: InvocationContext) => Promise<MessageDisposition> {
  const invalidMessages = services.queue(QUEUE_NAMES.invalidMessages);
  return (message, context) =>
    runQueueHandler(
      countingRefusals((inbound) => handler(inbound, context), sourceQueue, telemetryOf(services)),
      inboundFromTrigger(message, context),
      { sourceQueue, invalidMessages, logger: services.logger },
    );
}
