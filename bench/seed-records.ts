// The records `npm run bench:supervisor` seeds: valid state records built as the app builds them, from
// `newPendingRecord` through the transition table, in a mix whose only fixed parts are the records in
// flight (admission control caps them, whatever the history) and the expired ones.

import { applyTransition } from "../src/domain/apply-transition.js";
import { orderFromMessage } from "../src/domain/order.js";
import { newPendingRecord, type StateRecord } from "../src/domain/state-record.js";
import { addMilliseconds, type IsoInstant } from "../src/domain/time.js";
import type { Actor, Command } from "../src/domain/transition-commands.js";
import { ORDER_STEPS } from "../src/domain/workflow.js";

export const EXPIRED = 100;
/** Attempts running, not yet expired: MAX_IN_FLIGHT's default. */
export const IN_FLIGHT = 200;

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const ATTEMPT_TIMEOUT_MS = 2 * MINUTE;

export type RecordKind = "processed" | "pending" | "failed" | "expired" | "expiredCompensation" | "running";

/**
 * The kind of the `i`th record: `EXPIRED` expired (one in five a compensation), `IN_FLIGHT`
 * running, and of the rest 3% pending, 1% failed and the others processed.
 */
export function kindOf(i: number): RecordKind {
  if (i < EXPIRED) return i % 5 === 0 ? "expiredCompensation" : "expired";
  if (i < EXPIRED + IN_FLIGHT) return "running";
  const rest = i % 100;
  if (rest < 3) return "pending";
  if (rest < 4) return "failed";
  return "processed";
}

/** The `i`th record, as of `now`: expired ones passed their deadline between 30 days and a minute ago. */
export function seedRecord(i: number, now: IsoInstant): StateRecord {
  const orderId = `ord-${String(i).padStart(7, "0")}`;
  const kind = kindOf(i);
  const at = eventTime(kind, i, now);
  const order = orderFromMessage({
    schemaVersion: 1,
    orderId,
    customerId: `cust-${i % 5_000}`,
    currency: "EUR",
    items: [{ sku: `SKU-${i % 300}`, quantity: 1 + (i % 3), unitPriceMinor: 1_299 }],
  });
  const submitted = addMilliseconds(at, -MINUTE);
  const record = newPendingRecord({
    order,
    replyTo: "order-status",
    now: submitted,
    retryBudgetLimit: 400,
    undoReserve: 72,
  });
  switch (kind) {
    case "pending":
      return record;
    case "processed":
      return finished(record, at);
    case "failed":
      return failed(record, at);
    case "running":
    case "expired":
      return claimed(record, at);
    case "expiredCompensation":
      return compensating(claimed(record, at), at);
  }
}

/** When the record was claimed (or, for a pending one, became due). */
function eventTime(kind: RecordKind, i: number, now: IsoInstant): IsoInstant {
  switch (kind) {
    case "running":
      return addMilliseconds(now, -(i % 60) * 1_000);
    case "expired":
    case "expiredCompensation":
      // Deadlines spread from 30 days ago (the first) to a minute ago (the last).
      return addMilliseconds(
        now,
        -ATTEMPT_TIMEOUT_MS - MINUTE - Math.round(((EXPIRED - 1 - i) * 30 * DAY) / EXPIRED),
      );
    default:
      return addMilliseconds(now, -DAY - (i % 10_000) * MINUTE);
  }
}

function claimed(record: StateRecord, at: IsoInstant): StateRecord {
  return apply(record, "starter", { type: "claim", now: at, attemptTimeoutMs: ATTEMPT_TIMEOUT_MS });
}

function finished(record: StateRecord, at: IsoInstant): StateRecord {
  let next = claimed(record, at);
  for (const step of ORDER_STEPS) {
    next = startStep(next, step, at);
    next = apply(next, "orchestration", {
      type: "completeStep",
      instanceId: owner(next),
      step,
      now: at,
      reference: `ref-${step}`,
    });
  }
  return apply(next, "orchestration", { type: "finish", instanceId: owner(next), now: at });
}

function failed(record: StateRecord, at: IsoInstant): StateRecord {
  const [first] = ORDER_STEPS;
  const next = startStep(claimed(record, at), first, at);
  return apply(next, "orchestration", {
    type: "fail",
    instanceId: owner(next),
    now: at,
    failure: { kind: "permanent", code: "OutOfStock", message: "the partner refused", step: first },
  });
}

/** A compensation under way: the first step completed, the second failed, its deadline the attempt's. */
function compensating(record: StateRecord, at: IsoInstant): StateRecord {
  const [first, second] = ORDER_STEPS;
  let next = startStep(record, first, at);
  next = apply(next, "orchestration", {
    type: "completeStep",
    instanceId: owner(next),
    step: first,
    now: at,
    reference: "ref",
  });
  next = startStep(next, second, at);
  return apply(next, "orchestration", {
    type: "beginCompensation",
    instanceId: owner(next),
    now: at,
    completeBy: record.completeBy ?? addMilliseconds(at, ATTEMPT_TIMEOUT_MS),
    failure: { kind: "permanent", code: "CardDeclined", message: "the partner refused", step: second },
    undo: { callsPerRequest: 3, amplification: 1 },
  });
}

function startStep(record: StateRecord, step: (typeof ORDER_STEPS)[number], at: IsoInstant): StateRecord {
  return apply(record, "orchestration", {
    type: "startStep",
    instanceId: owner(record),
    step,
    now: at,
    // The attempt's deadline: a step's own is never later.
    completeBy: record.completeBy ?? addMilliseconds(at, ATTEMPT_TIMEOUT_MS),
    requestedCalls: 3,
    amplification: 1,
  });
}

function owner(record: StateRecord): string {
  if (record.lockedBy === null) throw new Error(`${record.orderId} is not owned`);
  return record.lockedBy;
}

function apply(record: StateRecord, actor: Actor, command: Command): StateRecord {
  const result = applyTransition(record, actor, command);
  if (!result.ok) throw result.error;
  return result.value.record;
}
