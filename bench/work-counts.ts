/**
 * The durable work a finished run did, counted from what its SQLite file keeps: orchestration
 * episodes, the history they wrote, the activities and timers they scheduled, and the state-record
 * writes. Read-only, and from the tables both this build and earlier ones write, so two builds'
 * files can be set side by side.
 */
import Database from "better-sqlite3";
import { EventType } from "../laptop/durable/history.js";

export interface DurableWork {
  /** State records (`state_records` rows). */
  readonly orders: number;
  /** Orchestration instances (`df_instances` rows). */
  readonly instances: number;
  /** Orchestration episodes: `df_history` holds one row each. */
  readonly episodes: number;
  /** History events across all episodes. */
  readonly historyEvents: number;
  /** The history's stored size in bytes (its JSON text, UTF-8). */
  readonly historyBytes: number;
  /** Activities scheduled (TaskScheduled events). */
  readonly activities: number;
  /** Durable timers created (TimerCreated events). */
  readonly timers: number;
  /** State-record writes, the create included (`state_audit` rows); null when the run kept no audit. */
  readonly stateWrites: number | null;
}

interface HistoryTotals {
  readonly episodes: number;
  readonly historyEvents: number;
  readonly historyBytes: number;
  readonly activities: number;
  readonly timers: number;
}

// The event types are the Durable Task Framework's numbers, which every build stores unchanged.
const HISTORY_TOTALS = `
  SELECT
    (SELECT count(*) FROM df_history) AS episodes,
    (SELECT coalesce(sum(json_array_length(events)), 0) FROM df_history) AS historyEvents,
    (SELECT coalesce(sum(length(CAST(events AS BLOB))), 0) FROM df_history) AS historyBytes,
    coalesce(sum(json_extract(event.value, '$.EventType') = ${EventType.TaskScheduled}), 0) AS activities,
    coalesce(sum(json_extract(event.value, '$.EventType') = ${EventType.TimerCreated}), 0) AS timers
  FROM df_history, json_each(df_history.events) AS event`;

/** Totals for the run whose database is `sqliteFile`; throws if it is missing or not such a database. */
export function countDurableWork(sqliteFile: string): DurableWork {
  const db = new Database(sqliteFile, { readonly: true, fileMustExist: true });
  try {
    const count = (table: string) =>
      (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const hasAudit = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'state_audit'")
      .get();
    const history = db.prepare(HISTORY_TOTALS).get() as HistoryTotals;
    return {
      orders: count("state_records"),
      instances: count("df_instances"),
      ...history,
      stateWrites: hasAudit ? count("state_audit") : null,
    };
  } finally {
    db.close();
  }
}

/** Each count over `orders`, by the same names; `orders` itself and an absent state-write count left out. */
export function perOrder(work: DurableWork, orders: number): Record<string, number> {
  if (!(orders > 0)) throw new RangeError(`per order of ${orders} orders`);
  const figures: Record<string, number> = {};
  for (const [name, value] of Object.entries(work)) {
    if (name !== "orders" && typeof value === "number") figures[name] = value / orders;
  }
  return figures;
}
