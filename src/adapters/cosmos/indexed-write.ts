import type { StateRecord } from "../../domain/state-record.js";
import type { IsoInstant } from "../../domain/time.js";
import type { Meter } from "./query-all.js";
import { indexedDeadline, type RecoveryEntry, type RecoveryIndex } from "./recovery-index.js";

/**
 * What the writer knows of the version its replace is conditional on: its recovery deadline (null: it
 * could not expire). Unknown when absent; the write then takes every step below.
 */
export interface ReplacedVersion {
  readonly deadline: IsoInstant | null;
}

/** A conditional write of a record: whether it was written, and what the caller returns either way. */
export interface WriteOutcome<T> {
  readonly written: boolean;
  readonly result: T;
}

/** A record write: a create (the record did not exist) or a replace. */
export type WriteKind = "create" | "replace";

/**
 * Writes a record and keeps its recovery entry right (docs/recovery-index.md). Cosmos DB has no
 * transaction across containers, so the entry is written around the record, in an order that keeps one
 * promise whatever fails or races: a record that can expire with deadline D has an entry no later than D.
 *
 * - A deadline is covered before the record is written: the entry is created or lowered to it (never
 *   raised), and written even when already early enough, so that a removal decided on the entry as it
 *   was fails. A writer that then loses its race, or dies, leaves an entry early, never late.
 * - Once the record is written, the entry is raised to the exact deadline, and the entry of a record
 *   that can no longer expire is deleted, each only if the entry is unchanged since this writer read it:
 *   a later writer, who read the record after this write, has written the entry in between.
 *
 * The steps after the write are best effort: the record is written, and an entry left early or stale is
 * safe; the Supervisor repairs it when its deadline comes (`expired-scan.ts`).
 *
 * A replace that moves the deadline later than the version it replaces touches no entry at all: that
 * version's entry is no later than its deadline, so no later than the new one (docs/recovery-index.md,
 * "A later deadline"). An order's steps each move it later, so most writes cost the record's alone.
 */
export async function writeIndexed<T>(
  index: RecoveryIndex,
  record: StateRecord,
  kind: WriteKind,
  write: () => Promise<WriteOutcome<T>>,
  meter: Meter,
  replaced?: ReplacedVersion,
): Promise<T> {
  const deadline = indexedDeadline(record);
  if (deadline !== null && replaced?.deadline != null && deadline >= replaced.deadline) {
    // A later deadline than the version replaced: its entry, no later than that one, stays early.
    return (await write()).result;
  }
  if (deadline === null) {
    // A record created without a deadline needs no entry; one left by a failed create is stale, and repaired.
    const entry = kind === "replace" ? await index.read(record.orderId, meter) : undefined;
    const outcome = await write();
    if (outcome.written && entry) await bestEffort(() => index.removeIfUnchanged(entry, meter));
    return outcome.result;
  }
  const covered = await index.lowerTo(record.orderId, deadline, meter, replaced?.deadline === null);
  const outcome = await write();
  if (outcome.written) await bestEffort(() => settle(index, covered, kind, deadline, meter));
  return outcome.result;
}

/**
 * Raises the entry to the record's deadline if nobody wrote it since `covered`. After a create, the
 * deadline is covered once more first: the Supervisor deletes an entry whose record it could not read,
 * taking it for the leftover of a failed create, and it may have read just before this one; covering
 * again restores the entry, or makes that deletion fail.
 */
async function settle(
  index: RecoveryIndex,
  covered: RecoveryEntry,
  kind: WriteKind,
  deadline: IsoInstant,
  meter: Meter,
): Promise<void> {
  const current = kind === "create" ? await index.lowerTo(covered.orderId, deadline, meter) : covered;
  if (current.completeBy < deadline) await index.replaceIfUnchanged(current, deadline, meter);
}

async function bestEffort(step: () => Promise<unknown>): Promise<void> {
  try {
    await step();
  } catch {
    // The record is written; the entry stays early or stale, which the Supervisor repairs.
  }
}
