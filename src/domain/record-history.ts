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

/** `entry` appended; past HISTORY_LIMIT the oldest entries are counted into the summary, never dropped unseen. */
export function withHistoryEntry<R extends RecordHistory>(record: R, entry: HistoryEntry): R {
  const history = [...record.history, entry];
  let summary = record.historySummary;
  while (history.length > HISTORY_LIMIT) {
    const oldest = history.shift() as HistoryEntry;
    summary = summary
      ? {
          entries: summary.entries + 1,
          since: summary.since,
          until: oldest.at,
          commands: { ...summary.commands, [oldest.command]: (summary.commands[oldest.command] ?? 0) + 1 },
        }
      : { entries: 1, since: oldest.at, until: oldest.at, commands: { [oldest.command]: 1 } };
  }
  return { ...record, history, historySummary: summary };
}
