import { applyTransition, type TransitionError } from "../domain/apply-transition.js";
import type { StateRecord, StoredStateRecord } from "../domain/state-record.js";
import type { Actor, Command } from "../domain/transition-commands.js";
import type { StateStore } from "../ports/state-store.js";
import { hasRecentRecords } from "./recent-records.js";

export type UpdateOutcome =
  | {
      readonly ok: true;
      readonly record: StoredStateRecord;
      readonly changed: boolean;
      /** When several commands were asked for: the one that was refused after the earlier ones applied. */
      readonly laterRefusal?: TransitionError;
    }
  | { readonly ok: false; readonly reason: "notFound" }
  | { readonly ok: false; readonly reason: "refused"; readonly error: TransitionError }
  | { readonly ok: false; readonly reason: "lostRace" };

/**
 * One conditional update of a record as read: apply the transitions in order (stopping at the first
 * refusal), write the result only if the record still has the ETag it was read with. A writer that
 * lost a race learns it and has written nothing.
 */
export async function updateAsRead(
  states: StateStore,
  record: StoredStateRecord,
  actor: Actor,
  commands: Command | readonly Command[],
): Promise<UpdateOutcome> {
  let next: StateRecord = record;
  let changed = false;
  let laterRefusal: TransitionError | undefined;
  for (const [index, command] of (Array.isArray(commands) ? commands : [commands]).entries()) {
    const transition = applyTransition(next, actor, command as Command);
    if (!transition.ok) {
      if (index === 0) return { ok: false, reason: "refused", error: transition.error };
      laterRefusal = transition.error;
      break;
    }
    next = transition.value.record;
    changed ||= transition.value.changed;
  }
  const extra = laterRefusal ? { laterRefusal } : {};
  if (!changed) return { ok: true, record, changed: false, ...extra };
  const written = await states.replace(next, record._etag);
  if (written.ok) return { ok: true, record: written.value, changed: true, ...extra };
  return written.error.kind === "NotFound"
    ? { ok: false, reason: "notFound" }
    : { ok: false, reason: "lostRace" };
}

/**
 * Reads the record and applies the transitions, reading again when another writer got in between. A
 * store that remembers the version this process last wrote lets the first try start from it.
 * A changed record is judged afresh each time, so a write fenced on `lockedBy` is refused as soon as
 * the record belongs to someone else.
 */
export async function updateRecord(
  states: StateStore,
  orderId: string,
  actor: Actor,
  commands: (record: StateRecord) => Command | readonly Command[],
  maxAttempts = 10,
): Promise<UpdateOutcome> {
  const recent = hasRecentRecords(states) ? states.recent(orderId) : undefined;
  if (recent) {
    // Written only if still current; any other outcome is judged again on the record as stored.
    const outcome = await updateAsRead(states, recent, actor, commands(recent));
    if (outcome.ok && outcome.changed) return outcome;
  }
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const record = await states.get(orderId);
    if (!record) return { ok: false, reason: "notFound" };
    const outcome = await updateAsRead(states, record, actor, commands(record));
    if (outcome.ok || outcome.reason !== "lostRace") return outcome;
  }
  return { ok: false, reason: "lostRace" };
}
