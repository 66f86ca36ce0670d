import type { OrderMessage } from "../../../src/domain/order.js";
import type { JsonValue } from "../../../src/ports/message-queue.js";

/**
 * How a submission travels. `json`: the value itself on a queue, its JSON text (indented by `indent`)
 * over HTTP. `text`: the text itself, as a string body on a queue. `document`: a JSON document as
 * a client in any language writes it, which a JavaScript sender may not be able to serialise: its
 * text over HTTP, its bytes as a JSON body on Service Bus, its text as a string body on the embedded
 * queue (whose senders put serialised values). `bytes`: an HTTP body only.
 */
export type Wire =
  | { readonly kind: "json"; readonly value: JsonValue; readonly indent: number }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "document"; readonly text: string }
  | { readonly kind: "bytes"; readonly bytes: Uint8Array };

/** What makes an invalid message invalid: one field, its size, or not being a JSON object at all. */
export type Problem = "field" | "size" | "form";

export type Expectation =
  | { readonly valid: true; readonly order: OrderMessage }
  | { readonly valid: false; readonly field: string; readonly problem: Problem };

/** One input to the orders entry points, with what the contract says must become of it. */
export interface Submission {
  readonly label: string;
  readonly wire: Wire;
  readonly expect: Expectation;
  /** The order id whose stored data must not change unless the submission is accepted, if any. */
  readonly watch: string | null;
  /** The sender's trace context (a header over HTTP, an application property on a queue), well-formed or not. */
  readonly traceparent: string | null;
  /** HTTP only: the body sent in chunks, without a Content-Length. */
  readonly chunked: boolean;
}

/** A submission before its framing (trace context, chunking) is added. */
export type Content = Omit<Submission, "traceparent" | "chunked">;

/** The text an HTTP client sends for `wire`. */
export function httpBody(wire: Wire): string | Uint8Array {
  if (wire.kind === "bytes") return wire.bytes;
  if (wire.kind === "text" || wire.kind === "document") return wire.text;
  return JSON.stringify(wire.value, null, wire.indent);
}

/** The body a queue sender puts on the queue for `wire` (HTTP-only bytes never reach here). */
export function queueBody(wire: Wire): JsonValue {
  if (wire.kind === "bytes") throw new Error("a bytes body is only sent over HTTP");
  return wire.kind === "json" ? wire.value : wire.text;
}
