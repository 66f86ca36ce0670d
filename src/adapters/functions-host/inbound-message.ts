import type { InboundMessage } from "../../ports/message-handler.js";
import type { JsonValue } from "../../ports/message-queue.js";

/** The part of the Functions InvocationContext a Service Bus trigger's metadata arrives in. */
export interface TriggerContext {
  readonly triggerMetadata?: Readonly<Record<string, unknown>>;
}

/**
 * The message a Service Bus queue trigger delivered, as the handlers see it. The host passes a JSON
 * body already parsed (the Node.js worker parses any text that is JSON), other text as a string and
 * anything else as bytes; the delivery facts come from the trigger metadata.
 */
export function inboundFromTrigger(message: unknown, context: TriggerContext): InboundMessage {
  const meta = context.triggerMetadata ?? {};
  const text = (key: string): string | undefined => {
    const value = meta[key];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const enqueued = text("enqueuedTimeUtc");
  return {
    messageId: text("messageId") ?? "",
    body: bodyOf(message),
    deliveryCount: Number(meta.deliveryCount ?? 1),
    enqueuedTime: enqueued ? new Date(enqueued) : new Date(0),
    correlationId: text("correlationId"),
    applicationProperties: propertiesOf(meta.applicationProperties),
  };
}

/**
 * Bytes are decoded here. A string is kept as it is: it is either text that is not JSON or a body that
 * was a JSON string, and parsing it again would decode that string a second time (a JSON string
 * holding an order's JSON would become the order, where the embedded host refuses it).
 */
function bodyOf(message: unknown): JsonValue {
  if (message instanceof Uint8Array) return parseOrKeep(new TextDecoder().decode(message));
  return (message ?? null) as JsonValue;
}

/** A JSON text is the body it encodes; other text is kept as it is, for the handler to refuse. */
function parseOrKeep(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

function propertiesOf(value: unknown): Record<string, string | number | boolean> {
  if (typeof value !== "object" || value === null) return {};
  const properties: Record<string, string | number | boolean> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === "string" || typeof item === "number" || typeof item === "boolean")
      properties[key] = item;
  }
  return properties;
}
