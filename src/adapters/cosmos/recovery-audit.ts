import type { Container } from "@azure/cosmos";
import type { StateRecord } from "../../domain/state-record.js";
import type { Meter } from "./query-all.js";
import { readAll } from "./query-all.js";
import { indexedDeadline, type RecoveryIndex } from "./recovery-index.js";

type RecordDeadline = Pick<StateRecord, "orderId" | "processState" | "completeBy">;

/**
 * Covers in the recovery index every record that can expire, as the state container has it: records
 * claimed by a build without the index (the index starts empty on the first deployment that has it,
 * and the previous build's instances drain after that), and any a writer left uncovered by dying
 * between the two entry writes of a create. Reads the `Processing` and `Compensating` records (the
 * orders in flight, from the `processState` index) and the whole index (as small), and lowers only the
 * entries that are missing or late. Returns how many it covered.
 */
export async function coverRecordsThatCanExpire(
  records: Container,
  index: RecoveryIndex,
  meter: Meter,
): Promise<number> {
  const inFlight = await readAll<RecordDeadline>(
    records,
    "SELECT c.orderId, c.processState, c.completeBy FROM c WHERE c.processState IN ('Processing', 'Compensating')",
    meter,
  );
  const entries = new Map((await index.all(meter)).map((entry) => [entry.orderId, entry.completeBy]));
  let covered = 0;
  for (const record of inFlight) {
    const deadline = indexedDeadline(record);
    const entry = entries.get(record.orderId);
    if (deadline === null || (entry !== undefined && entry <= deadline)) continue;
    await index.lowerTo(record.orderId, deadline, meter);
    covered++;
  }
  return covered;
}
