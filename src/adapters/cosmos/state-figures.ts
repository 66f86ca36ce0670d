/** The read model's queries that read records rather than count them: the dashboard's and the stats' figures. */
import type { Container } from "@azure/cosmos";
import { type ProcessState, TERMINAL_STATES } from "../../domain/state-record.js";
import type { IsoInstant } from "../../domain/time.js";
import type { FinishedInMinute, WaitingRecord } from "../../ports/state-read-model.js";

/**
 * The state leads the ORDER BY, matching the container's (processState, progressAt) composite index. A
 * document written before the record's version 3 has no `progressAt`, so the composite index leaves it
 * out until its next write (for a `Pending` record, its next claim).
 */
export async function oldestPending(records: Container): Promise<WaitingRecord | null> {
  const { resources } = await records.items
    .query<WaitingRecord>({
      query:
        "SELECT TOP 1 c.orderId, c.progressAt FROM c WHERE c.processState = @state ORDER BY c.processState ASC, c.progressAt ASC",
      parameters: [{ name: "@state", value: "Pending" }],
    })
    .fetchAll();
  const [oldest] = resources;
  return oldest ? { orderId: oldest.orderId, progressAt: oldest.progressAt } : null;
}

/**
 * The window's finished records, two short fields of each, counted here per minute and state: one
 * query over the (processState, updatedAt) index's ranges, whose cost grows with the orders finished
 * in the window (the stand-in has no GROUP BY to count them in the database).
 */
export async function countFinishedPerMinute(
  records: Container,
  from: IsoInstant,
  to: IsoInstant,
): Promise<readonly FinishedInMinute[]> {
  const terminal = TERMINAL_STATES.map((state) => `'${state}'`).join(", ");
  const { resources } = await records.items
    .query<{ processState: ProcessState; updatedAt: string }>({
      query: `SELECT c.processState, c.updatedAt FROM c WHERE c.processState IN (${terminal}) AND c.updatedAt >= @from AND c.updatedAt < @to`,
      parameters: [
        { name: "@from", value: from },
        { name: "@to", value: to },
      ],
    })
    .fetchAll();
  const counts = new Map<string, FinishedInMinute>();
  for (const { processState, updatedAt } of resources) {
    const minute = updatedAt.slice(0, 16);
    const key = `${processState} ${minute}`;
    counts.set(key, { minute, processState, count: (counts.get(key)?.count ?? 0) + 1 });
  }
  return [...counts.values()];
}
