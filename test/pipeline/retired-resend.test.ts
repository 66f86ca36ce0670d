import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/ports/clock.js";
import { createRetentionPurge } from "../../src/supervisor/retention.js";
import {
  orderMessage,
  post,
  recordOf,
  runUntil,
  scenarioPerTest,
  settle,
  terminal,
} from "./pipeline-harness.js";

const openScenario = scenarioPerTest();
const DAY_MS = 86_400_000;

describe("a resend of an order retention purged", () => {
  it("is completed as a duplicate of the finished order: no record, no partner call, its final status again", async () => {
    const s = await openScenario({ RETENTION_DAYS: "30" });
    await post(s, orderMessage("ord-again"));
    await runUntil(s, terminal(s, "ord-again"));
    const done = await recordOf(s, "ord-again");
    expect(done.processState).toBe("Processed");
    const callsBefore = s.partner.ledger().calls;
    const statuses = async () =>
      (await s.pipeline.queue("status-test").peek(20)).map((m) => (m.body as { status: string }).status);
    expect(await statuses()).toEqual(["received", "processing", "completed"]);

    // Retention runs RETENTION_DAYS and a moment after the order finished. It has a clock of its own,
    // that far ahead: moving the pipeline's clock a month would tick its timers a month.
    const purgedAt = new Date(Date.parse(done.updatedAt) + 30 * DAY_MS + 1);
    const purgeClock: Clock = { now: () => purgedAt, sleep: (ms) => s.clock.sleep(ms) };
    const purge = createRetentionPurge({
      states: s.pipeline.states,
      durable: s.pipeline.runtime,
      clock: purgeClock,
      logger: s.logger,
      retentionDays: s.settings.retentionDays,
      batchSize: 100,
      maxBatches: 1,
    });
    expect(await purge()).toMatchObject({ records: 1, instances: 1 });
    expect(await s.pipeline.states.get("ord-again")).toBeUndefined();

    // The same message again, once the orders queue's duplicate detection (10 minutes here, a day on
    // Service Bus) has forgotten the first: as a deliberate resend after the retention would arrive.
    await s.clock.advance(11 * 60_000);
    await post(s, orderMessage("ord-again"));
    await runUntil(s, () => s.logger.events("submission.duplicateOfRetired").length === 1, { stepMs: 100 });
    await settle(s);

    expect(s.logger.events("submission.duplicateOfRetired")).toEqual([
      expect.objectContaining({
        orderId: "ord-again",
        finalState: "Processed",
        retiredAt: done.updatedAt,
        purgedAt: purgedAt.toISOString(),
        attempt: 1,
      }),
    ]);
    // No new record, nothing started, nothing sent to the partner.
    expect(await s.pipeline.states.get("ord-again")).toBeUndefined();
    expect(await s.pipeline.states.countByState()).toMatchObject({ Pending: 0, Processing: 0 });
    expect(await s.pipeline.runtime.getStatus("ord-again:1")).toBeUndefined();
    expect(await s.pipeline.runtime.getStatus("ord-again:2")).toBeUndefined();
    expect(s.partner.ledger().calls).toBe(callsBefore);
    // The message completed: neither on its queue nor dead-lettered, and no operator alert.
    expect(await s.pipeline.ordersQueue.peek(10)).toEqual([]);
    expect(await s.pipeline.ordersQueue.deadLetterQueue.peek(10)).toEqual([]);
    expect(s.logger.events("operator.alert")).toEqual([]);
    expect(s.logger.events("submission.accepted")).toHaveLength(1);
    // The submitter hears how the order finished, under the id it had then.
    expect(await statuses()).toEqual(["received", "processing", "completed", "completed"]);
  });
});
