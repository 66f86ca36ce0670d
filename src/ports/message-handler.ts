import type { JsonValue } from "./message-queue.js";

/** A message as a queue-triggered handler sees it, under the Functions host or the embedded host. */
export interface InboundMessage {
  readonly messageId: string;
  readonly body: JsonValue;
  readonly deliveryCount: number;
  readonly enqueuedTime: Date;
  readonly correlationId: string | undefined;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
}

/**
 * What the handler wants done with the message once it returns. Throwing instead means "try again
 * later": the message is abandoned and redelivered, and dead-lettered by the broker past the maximum
 * delivery count.
 */
export type MessageDisposition =
  | { readonly action: "complete" }
  | { readonly action: "deadLetter"; readonly reason: string; readonly description: string };

export type MessageHandler = (message: InboundMessage) => Promise<MessageDisposition>;

export const COMPLETE: MessageDisposition = { action: "complete" };
