import { z } from "zod";

/**
 * A W3C `traceparent` (version 00): trace id, parent span id, flags, in lower-case hex. It is how an
 * order's trace crosses what no span survives: queue messages, the state record, the orchestration's
 * input, the Agent's request. Carried as data, it is deterministic for the orchestrator to pass on.
 */
export const TRACEPARENT_PATTERN = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

export const traceparentSchema = z
  .string()
  .regex(TRACEPARENT_PATTERN, "must be a W3C traceparent: 00-<32 hex>-<16 hex>-<2 hex>");

export function isTraceparent(value: unknown): value is string {
  return typeof value === "string" && TRACEPARENT_PATTERN.test(value);
}
