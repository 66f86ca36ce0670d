import type { StateRecord, StoredStateRecord } from "../domain/state-record.js";
import { type Actor, applyTransition, type Command, type TransitionError } from "../domain/transitions.js";
import type { StateStore } from "../ports/state-store.js";

export type UpdateOutcome =
  | { readonly ok: true; readonly record: StoredStateRecord; readonly changed: boolean }
  | { readonly ok: false; readonly reason: "notFound" }
  | { readonly ok: false; readonly reason: "refused"; readonly error: TransitionError }
  | { readonly ok: false; readonly reason: "lostRace" };

/**
 * One conditional update of a record as read: apply the transition, write it only if the record still
 * has the ETag it was read with. A writer that lost a race learns it and has written nothing.
 */
export async function updateAsRead(
  states: StateStore,
  record: StoredStateRecord,
  actor: Actor,
  command: Command,
): Promise<UpdateOutcome> {
  const transition = applyTransition(record, actor, command);
  if (!transition.ok) return { ok: false, reason: "refused", error: transition.error };
  if (!transition.value.changed) return { ok: true, record, changed: false };
  const written = await states.replace(transition.value.record, record._etag);
  if (written.ok) return { ok: true, record: written.value, changed: true };
  return written.error.kind === "NotFound"
    ? { ok: false, reason: "notFound" }
    : { ok: false, reason: "lostRace" };
}

/**
 * Reads the record and applies the transition, reading again when another writer got in between.
 * A changed record is judged afresh each time, so a write fenced on `lockedBy` is refused as soon as
 * the record belongs to someone else.
 */
export async function updateRecord(
  states: StateStore,
  orderId: string,
  actor: Actor,
  command: (record: StateRecord) => Command,
  maxAttempts = 10,
): Promise<UpdateOutcome> {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const record = await states.get(orderId);
    if (!record) return { ok: false, reason: "notFound" };
    const outcome = await updateAsRead(states, record, actor, command(record));
    if (outcome.ok || outcome.reason !== "lostRace") return outcome;
  }
  return { ok: false, reason: "lostRace" };
}
