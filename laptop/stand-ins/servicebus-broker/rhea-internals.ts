import type { Socket } from "node:net";
import rhea, { type Connection, type Delivery, type Receiver, type Sender } from "rhea";

/** What the broker uses of rhea beyond its type declarations, in one place. */

/** A sender's credit: rhea keeps it on the link. */
export function creditOf(sender: Sender): number {
  return (sender as unknown as { credit: number }).credit;
}

/** The SDK sizes its send batches by the maximum message size the broker's end of the link declares. */
export function declareMaxMessageSize(receiver: Receiver, bytes: number): void {
  (receiver as unknown as { local: { attach: { max_message_size: number } } }).local.attach.max_message_size =
    bytes;
}

/**
 * rhea drops a delivery it sent from its session's buffer (2048 deliveries) only once both ends have
 * settled it. In receiver-settle-mode second, which peek-lock uses, the broker's settlement answers
 * the receiver's disposition and is the last word: the SDK never settles again. Without this, a link
 * stops receiving after 2048 messages.
 */
export function forgetOnceSettled(delivery: Delivery): void {
  (delivery as unknown as { remote_settled: boolean }).remote_settled = true;
}

interface Outcome {
  described(): unknown;
}

const outcomes = rhea.message as unknown as {
  accepted(): Outcome;
  released(): Outcome;
  rejected(fields: { error?: { condition: string; description: string } }): Outcome;
  modified(fields: { delivery_failed?: boolean; undeliverable_here?: boolean }): Outcome;
};

/** Delivery states to settle with. */
export const OUTCOME = {
  accepted: () => outcomes.accepted().described(),
  released: () => outcomes.released().described(),
  modified: (fields: { delivery_failed?: boolean; undeliverable_here?: boolean }) =>
    outcomes.modified(fields).described(),
  /** Dead-lettered: a rejected outcome without an error, which the SDK takes as success. */
  deadLettered: () => outcomes.rejected({}).described(),
  failed: (condition: string, description: string) =>
    outcomes.rejected({ error: { condition, description } }).described(),
};

/**
 * The SDK leaves Nagle's algorithm on: a small frame waits until the previous one is acknowledged,
 * and the kernel holds back (about 40 ms) an acknowledgement that has no data to ride on. Answering
 * every chunk the client sends with an empty frame (an AMQP heartbeat) carries it at once.
 */
export function acknowledgePromptly(connection: Connection): void {
  const internals = connection as unknown as { readonly socket: Socket; _write_frame(): void };
  internals.socket.on("data", () => {
    if (connection.is_open()) internals._write_frame();
  });
}
