import { describe, expect, it } from "vitest";
import { newPendingRecord } from "../../src/domain/state-record.js";
import type { Clock } from "../../src/ports/clock.js";
import { createInstanceSweep, createRetentionPurge } from "../../src/supervisor/retention.js";
import { sampleOrder } from "../support/records.js";
import {
  orderMessage,
  post,
  recordOf,
  runUntil,
  type Scenario,
  scenarioPerTest,
  terminal,
} from "./pipeline-harness.js";

const openScenario = scenarioPerTest();
const DAY_MS = 86_400_000;

/** The scenario's virtual clock, seen `offsetMs` later: retention runs days ahead of the orders. */
function later(s: Scenario, offset: { ms: number }): Clock {
  return { now: () => new Date(s.clock.now().getTime() + offset.ms), sleep: (ms) => s.clock.sleep(ms) };
}

async function parked(
  s: Scenario,
  orderId: string,
  processState: "Compensated" | "Error" | "CompensationFailed",
) {
  const record = newPendingRecord({
    order: sampleOrder(orderId),
    replyTo: null,
    now: s.clock.now().toISOString(),
    retryBudgetLimit: 30,
    undoReserve: 0,
  });
  await s.pipeline.orders.insertIfAbsent(sampleOrder(orderId));
  await s.pipeline.states.createIfAbsent({ ...record, processState });
}

describe("retention", () => {
  it("deletes Processed and Compensated records and their histories after RETENTION_DAYS; Error and CompensationFailed stay until an operator acts", async () => {
    const s = await openScenario({ RETENTION_DAYS: "30" });
    const offset = { ms: 0 };
    const purge = createRetentionPurge({
      states: s.pipeline.states,
      durable: s.pipeline.runtime,
      clock: later(s, offset),
      logger: s.logger,
      retentionDays: s.settings.retentionDays,
      batchSize: 2,
      maxBatches: 10,
    });

    await post(s, orderMessage("ord-done"));
    await runUntil(s, terminal(s, "ord-done"));
    await parked(s, "ord-parked", "Error");
    await parked(s, "ord-undone", "Compensated");
    await parked(s, "ord-stuck", "CompensationFailed");
    await parked(s, "ord-error", "Error");
    const done = await recordOf(s, "ord-done");
    expect(done.processState).toBe("Processed");
    expect(await s.pipeline.runtime.getStatus("ord-done:1")).toBeDefined();

    // Ten minutes on, an operator resubmits the parked order: it finishes then, and its clock starts then.
    await s.clock.advance(10 * 60_000);
    expect(await s.pipeline.operator.resubmit("ord-parked", "alice", "partner fixed")).toMatchObject({
      ok: true,
    });
    await runUntil(s, terminal(s, "ord-parked"));
    const compensated = await recordOf(s, "ord-parked");
    expect(compensated).toMatchObject({ processState: "Processed", attempt: 1 });

    // The pipeline's own purge ran a minute after start (and found nothing due).
    const purgeLines = () => s.logger.lines.filter((l) => l.event === "retention.purge");
    expect(purgeLines()).toHaveLength(1);
    expect(purgeLines()[0]).toMatchObject({ records: 0 });

    // Not a moment early: RETENTION_DAYS after the last change, to the millisecond, nothing goes.
    offset.ms = Date.parse(done.updatedAt) + 30 * DAY_MS - s.clock.now().getTime();
    expect(await purge()).toMatchObject({ records: 0, instances: 0 });
    expect(await s.pipeline.states.get("ord-done")).toBeDefined();

    offset.ms += 1;
    expect(await purge()).toMatchObject({ records: 2, instances: 1, truncated: false });
    expect(await s.pipeline.states.get("ord-done")).toBeUndefined();
    expect(await s.pipeline.states.get("ord-undone")).toBeUndefined();
    expect(await s.pipeline.runtime.getStatus("ord-done:1")).toBeUndefined();
    expect(s.pipeline.runtime.historyOf("ord-done:1")).toEqual([]);
    // The resubmitted order finished ten minutes later: it and its attempt's history stay.
    expect(await s.pipeline.states.get("ord-parked")).toBeDefined();
    expect(await s.pipeline.runtime.getStatus("ord-parked:1")).toBeDefined();

    offset.ms = Date.parse(compensated.updatedAt) + 30 * DAY_MS + 1 - s.clock.now().getTime();
    expect(await purge()).toMatchObject({ records: 1, instances: 1 });
    expect(await s.pipeline.states.get("ord-parked")).toBeUndefined();
    expect(await s.pipeline.runtime.getStatus("ord-parked:1")).toBeUndefined();

    // Years on, the orders waiting for an operator are still there.
    offset.ms += 3_650 * DAY_MS;
    expect(await purge()).toMatchObject({ records: 0, instances: 0 });
    expect((await recordOf(s, "ord-error")).processState).toBe("Error");
    expect((await recordOf(s, "ord-stuck")).processState).toBe("CompensationFailed");

    const lines = purgeLines().slice(1);
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatchObject({ records: 2, instances: 1, batches: 1, durationMs: expect.any(Number) });
  });

  it("purges in bounded batches and says when a run stopped with records still due", async () => {
    const s = await openScenario({}, { start: false });
    for (let i = 0; i < 5; i++) await parked(s, `ord-${i}`, "Compensated");
    const run = (maxBatches: number) =>
      createRetentionPurge({
        states: s.pipeline.states,
        durable: s.pipeline.runtime,
        clock: later(s, { ms: 31 * DAY_MS }),
        logger: s.logger,
        retentionDays: 30,
        batchSize: 2,
        maxBatches,
      })();
    expect(await run(1)).toMatchObject({ records: 2, batches: 1, truncated: true });
    expect(await run(10)).toMatchObject({ records: 3, batches: 2, truncated: false });
    expect(await s.pipeline.states.countByState()).toMatchObject({ Compensated: 0 });
  });

  it("purges, where the store expires records itself, the histories of orders whose record is gone, and keeps those of orders an operator must see", async () => {
    const s = await openScenario();
    for (const orderId of ["ord-expired", "ord-parked", "ord-old"]) {
      await post(s, orderMessage(orderId));
    }
    await runUntil(s, terminal(s, "ord-expired", "ord-parked", "ord-old"));
    // As Cosmos DB's ttl would have: the expired order's record is gone.
    const expired = await recordOf(s, "ord-expired");
    expect(await s.pipeline.states.remove("ord-expired", expired._etag)).toBe(true);
    // The parked order stands for one in Error (written directly: the table has no such move).
    const { _etag, ...parked } = await recordOf(s, "ord-parked");
    expect((await s.pipeline.states.replace({ ...parked, processState: "Error" }, _etag)).ok).toBe(true);

    const sweep = (days: number) =>
      createInstanceSweep({
        states: s.pipeline.states,
        durable: s.pipeline.runtime,
        clock: later(s, { ms: days * DAY_MS }),
        logger: s.logger,
        retentionDays: 30,
      })();
    expect(await sweep(29)).toMatchObject({ examined: 0, instances: 0 });
    expect(await sweep(31)).toMatchObject({ examined: 3, instances: 2, kept: 1 });
    expect(await s.pipeline.runtime.getStatus("ord-expired:1")).toBeUndefined();
    expect(await s.pipeline.runtime.getStatus("ord-parked:1")).toBeDefined();
    // Its record is Processed and past the retention: the store's ttl takes it, the sweep its history.
    expect(await s.pipeline.runtime.getStatus("ord-old:1")).toBeUndefined();
    expect(s.logger.lines.filter((l) => l.event === "retention.instances")).toHaveLength(2);
  });
});
