import { createHash } from "node:crypto";
import type { JsonValue, OutgoingMessage } from "../ports/message-queue.js";

/**
 * The message id every sender of an order message uses (HTTP API, `sas send`, the embedded host).
 * It is derived from the content: an identical resend is dropped by the queue's duplicate detection,
 * while a different message that reuses an order id still reaches submission, which dead-letters it
 * as a conflict. An id of the order id alone would let Service Bus drop that conflict silently.
 */
export function orderMessageId(body: JsonValue): string {
  const orderId =
    typeof body === "object" && body !== null && !Array.isArray(body) ? String(body.orderId ?? "") : "";
  const digest = createHash("sha256").update(JSON.stringify(body)).digest("hex").slice(0, 16);
  return `${orderId.slice(0, 64)}:${digest}`;
}

/** An order message as every sender puts it on the orders queue, with the trace it belongs to. */
export function orderQueueMessage(body: JsonValue, traceparent: string | null): OutgoingMessage {
  return {
    messageId: orderMessageId(body),
    body,
    ...(traceparent ? { applicationProperties: { traceparent } } : {}),
  };
}
