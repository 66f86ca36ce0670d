import type { OrderMessage } from "../../../src/domain/order.js";
import { businessOf } from "./changes.js";
import type { Stored } from "./stored.js";
import type { Expectation, Problem } from "./submission.js";

/** What must become of a submission, given what the stores held for its order before it was sent. */
export type Expected =
  /** A new order: accepted, and its record and order written. */
  | { readonly kind: "created"; readonly order: OrderMessage }
  /** A duplicate of an accepted order: accepted, nothing written. */
  | { readonly kind: "unchanged" }
  /** The same id with other data: dead-lettered naming one of `fields`, nothing written. */
  | { readonly kind: "conflict"; readonly fields: readonly string[] }
  /** Refused naming `field`, nothing written. */
  | { readonly kind: "invalid"; readonly field: string; readonly problem: Problem };

export function expectedOf(expect: Expectation, before: Stored | null): Expected {
  if (!expect.valid) return { kind: "invalid", field: expect.field, problem: expect.problem };
  const fields = conflictingFields(expect.order, before);
  if (fields.length > 0) return { kind: "conflict", fields };
  return before?.record ? { kind: "unchanged" } : { kind: "created", order: expect.order };
}

/** The immutable fields in which `message` differs from the stored order and record. */
function conflictingFields(message: OrderMessage, before: Stored | null): string[] {
  const fields: string[] = [];
  const incoming = businessOf(message);
  const { order, record } = before ?? {};
  if (order) {
    if (order.customerId !== incoming.customerId) fields.push("customerId");
    if (order.currency !== incoming.currency) fields.push("currency");
    const lines = order.items.map((item) => [item.sku, item.quantity, item.unitPriceMinor]);
    if (JSON.stringify(lines) !== JSON.stringify(incoming.items)) fields.push("items");
  }
  if (record && fields.length === 0 && record.replyTo !== incoming.replyTo) fields.push("replyTo");
  return fields;
}
