import { z } from "zod";
import { PROCESS_STATES } from "./process-state.js";
import { isoInstantSchema } from "./time.js";
import { integer, oneOf, text } from "./validation.js";
import { ORDER_STEPS } from "./workflow.js";

/** How many transitions a record keeps in full; older ones are folded into its summary. */
export const HISTORY_LIMIT = 40;

/** One transition of a record: when, who, which command, from and to which state, and what it was about. */
export const historyEntrySchema = z.strictObject({
  at: isoInstantSchema,
  actor: text(1, 32),
  command: text(1, 32),
  from: oneOf(PROCESS_STATES),
  to: oneOf(PROCESS_STATES),
  attempt: integer(0, 1_000_000),
  step: oneOf(ORDER_STEPS).nullable(),
  /** The failure code the transition recorded, if it recorded one. */
  code: text(1, 128).nullable(),
});
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

/** The transitions folded out of the history: how many, over which time, and how many of each command. */
export const historySummarySchema = z.strictObject({
  entries: integer(1, 1_000_000_000),
  since: isoInstantSchema,
  until: isoInstantSchema,
  commands: z.record(z.string(), integer(1, 1_000_000_000)),
});
export type HistorySummary = z.infer<typeof historySummarySchema>;

export interface RecordHistory {
  readonly history: readonly HistoryEntry[];
  readonly historySummary: HistorySummary | null;
}

/**
 * The history with `entry` appended; past HISTORY_LIMIT the oldest entries are counted into the summary,
 * never dropped unseen.
 */
export function historyWith(
  record: RecordHistory,
  entry: HistoryEntry,
): { history: HistoryEntry[]; historySummary: HistorySummary | null } {
  const all = [...record.history, entry];
  if (all.length <= HISTORY_LIMIT) return { history: all, historySummary: record.historySummary };
  const overflow = all.length - HISTORY_LIMIT;
  const historySummary = all.slice(0, overflow).reduce(summarised, record.historySummary);
  return { history: all.slice(overflow), historySummary };
}

/** `summary` with one more transition counted in. */
function summarised(summary: HistorySummary | null, entry: HistoryEntry): HistorySummary {
  const commands = { ...summary?.commands, [entry.command]: (summary?.commands[entry.command] ?? 0) + 1 };
  return {
    entries: (summary?.entries ?? 0) + 1,
    since: summary?.since ?? entry.at,
    until: entry.at,
    commands,
  };
}
