import type { ServiceBusMessage, ServiceBusReceivedMessage } from "@azure/service-bus";
import type { JsonValue, OutgoingMessage, ReceivedMessage } from "../../ports/message-queue.js";

/** Service Bus writes the dead-letter reason and description into the application properties too. */
const DEAD_LETTER_PROPERTIES = new Set(["DeadLetterReason", "DeadLetterErrorDescription"]);

export function toServiceBusMessage(message: OutgoingMessage): ServiceBusMessage {
  const outgoing: ServiceBusMessage = {
    messageId: message.messageId,
    body: message.body,
    contentType: "application/json",
  };
  if (message.correlationId !== undefined) outgoing.correlationId = message.correlationId;
  if (message.subject !== undefined) outgoing.subject = message.subject;
  if (message.applicationProperties !== undefined) {
    outgoing.applicationProperties = { ...message.applicationProperties };
  }
  if (message.scheduledEnqueueTime !== undefined) {
    outgoing.scheduledEnqueueTimeUtc = message.scheduledEnqueueTime;
  }
  return outgoing;
}

/**
 * The port's view of a received or peeked message. Two conversions: the SDK reports the AMQP
 * delivery-count, the deliveries that failed before this one (Service Bus puts its count minus one
 * there), so one is added to make the first delivery 1; and the sequence number, a 64-bit Long,
 * becomes a number, exact up to 2^53 (a partitioned entity's numbers carry the partition in their top
 * bits and are not exact).
 */
export function toReceivedMessage(message: ServiceBusReceivedMessage, locked: boolean): ReceivedMessage {
  return {
    messageId: String(message.messageId ?? ""),
    body: jsonBody(message.body),
    correlationId: message.correlationId === undefined ? undefined : String(message.correlationId),
    subject: message.subject,
    applicationProperties: scalarProperties(message.applicationProperties),
    sequenceNumber: message.sequenceNumber?.toNumber() ?? 0,
    enqueuedTime: message.enqueuedTimeUtc ?? new Date(0),
    deliveryCount: (message.deliveryCount ?? 0) + 1,
    lockToken: locked ? message.lockToken : undefined,
    lockedUntil: locked ? message.lockedUntilUtc : undefined,
    deadLetterReason: message.deadLetterReason,
    deadLetterErrorDescription: message.deadLetterErrorDescription,
  };
}

/** The SDK parses a JSON body; a body another client sent as raw bytes arrives as a Buffer. */
function jsonBody(body: unknown): JsonValue {
  return Buffer.isBuffer(body) ? body.toString("utf8") : (body as JsonValue);
}

function scalarProperties(properties: ServiceBusReceivedMessage["applicationProperties"]) {
  const result: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(properties ?? {})) {
    if (DEAD_LETTER_PROPERTIES.has(key)) continue;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      result[key] = value;
    }
  }
  return result;
}
