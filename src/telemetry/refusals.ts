import type { MessageHandler } from "../ports/message-handler.js";
import { instrumentsOf } from "./instruments.js";
import { globalTelemetry, type Telemetry } from "./telemetry.js";

/**
 * The handler, counting the messages it refuses (`sas.messages.dead_lettered`, by queue and reason).
 * Messages the broker dead-letters past the maximum delivery count are not counted here: the queue's
 * own metrics (Service Bus's dead-lettered message count) have them.
 */
export function countingRefusals(
  handler: MessageHandler,
  queue: string,
  telemetry: Telemetry = globalTelemetry(),
): MessageHandler {
  return async (message) => {
    const disposition = await handler(message);
    if (disposition.action === "deadLetter") {
      instrumentsOf(telemetry).deadLettered.add(1, {
        "messaging.destination.name": queue,
        "sas.reason": disposition.reason,
      });
    }
    return disposition;
  };
}
