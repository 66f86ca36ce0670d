import { z } from "zod";
import type { Result } from "./result.js";
import { isoInstantSchema } from "./time.js";
import { integer, literal, oneOf, text, type ValidationError, validateVersioned } from "./validation.js";

export const STATUS_MESSAGE_SCHEMA_VERSION = 1;

export const ORDER_STATUSES = [
  "received",
  "processing",
  "completed",
  "failed",
  "compensating",
  "compensated",
  "compensationFailed",
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** What the submitter hears on its own `replyTo` queue; `orderId` lets it correlate with its request. */
export const statusMessageSchema = z.strictObject({
  schemaVersion: literal(STATUS_MESSAGE_SCHEMA_VERSION),
  orderId: text(1, 64),
  status: oneOf(ORDER_STATUSES),
  attempt: integer(0, 1_000_000),
  at: isoInstantSchema,
  detail: text(0, 2_000).nullable(),
});
export type StatusMessage = z.infer<typeof statusMessageSchema>;

export function parseStatusMessage(input: unknown): Result<StatusMessage, ValidationError> {
  return validateVersioned("status message", statusMessageSchema, STATUS_MESSAGE_SCHEMA_VERSION, input);
}

/** The status message about `record`: its order and attempt, `status` at `at`. */
export function statusMessageFor(
  record: { readonly orderId: string; readonly attempt: number },
  status: OrderStatus,
  at: string,
  detail: string | null,
): StatusMessage {
  return {
    schemaVersion: STATUS_MESSAGE_SCHEMA_VERSION,
    orderId: record.orderId,
    status,
    attempt: record.attempt,
    at,
    detail,
  };
}

const RETRY_DETAIL = /^retrying after (\w+) did not finish/;

/**
 * The detail of the "processing" status sent when an attempt starts after one that failed (not after a
 * deferral): which step did not finish, and why, in words a submitter can show. `retriedStepOf` reads the
 * step back; web/storefront/store.js matches the same beginning.
 */
export function retryDetail(step: string, code: string): string {
  return `retrying after ${step} did not finish (${code})`;
}

/** The step a retry's detail names; null for any other detail. */
export function retriedStepOf(detail: string | null): string | null {
  return detail === null ? null : (RETRY_DETAIL.exec(detail)?.[1] ?? null);
}

/** Stable message id: one status per order, attempt and status, so a resend is dropped as a duplicate. */
export function statusMessageId(message: StatusMessage): string {
  return `${message.orderId}:${message.attempt}:${message.status}`;
}
