import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteOrdersRepository } from "../../laptop/sqlite/sqlite-orders-repository.js";
import { SqliteStateStore } from "../../laptop/sqlite/sqlite-state-store.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import { type StatusMessage, statusMessageId } from "../../src/domain/status-message.js";
import type { OperatorAlert } from "../../src/ports/alerts.js";
import { COMPLETE, type InboundMessage } from "../../src/ports/message-handler.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import { orderMessageId } from "../../src/scheduler/order-message-id.js";
import { createSubmissionHandler } from "../../src/scheduler/submission.js";

const T0 = "2026-03-01T00:00:00.000Z";
let db: EmbeddedDatabase | undefined;
afterEach(() => db?.close());

function message(orderId: string, replyTo: string | null = "status-app"): InboundMessage {
  const body: { [field: string]: JsonValue } = {
    schemaVersion: 1,
    orderId,
    customerId: "cust-1",
    currency: "EUR",
    items: [{ sku: "SKU-1", quantity: 1, unitPriceMinor: 500 }],
    ...(replyTo ? { replyTo } : {}),
  };
  return {
    messageId: orderMessageId(body),
    body,
    deliveryCount: 1,
    enqueuedTime: new Date(T0),
    correlationId: undefined,
    applicationProperties: {},
  };
}

function submission() {
  db = openDatabase(":memory:");
  const clock = new VirtualClock(T0);
  const logger = new MemoryLogger();
  const states = new SqliteStateStore(db);
  const sent: { replyTo: string; message: StatusMessage }[] = [];
  const alerts: OperatorAlert[] = [];
  const accepted: string[] = [];
  const handle = createSubmissionHandler({
    orders: new SqliteOrdersRepository(db, clock),
    states,
    notifier: { notify: async (replyTo, status) => void sent.push({ replyTo, message: status }) },
    alerts: { raise: async (alert) => void alerts.push(alert) },
    clock,
    logger,
    retryBudgetPerOrder: 30,
    undoReservePerOrder: 6,
    workflowVersion: 1,
    onAccepted: (orderId) => void accepted.push(orderId),
  });
  /** The order accepted, finished in `finalState` and purged by retention, as the store would see it. */
  const retire = async (orderId: string, finalState: "Processed" | "Compensated") => {
    const record = await states.get(orderId);
    if (!record) throw new Error(`no record for ${orderId}`);
    const { _etag, ...fields } = record;
    const done = await states.replace(
      { ...fields, processState: finalState, attempt: 2, updatedAt: "2026-03-01T00:05:00.000Z" },
      _etag,
    );
    if (!done.ok) throw done.error;
    expect(await states.remove(orderId, done.value._etag, "2026-04-01T00:00:00.000Z")).toBe(true);
  };
  return { handle, states, logger, sent, alerts, accepted, retire };
}

describe("submission of an order retention retired", () => {
  it("completes a resend as a duplicate of a finished order: no record, no nudge, no alert, the final status again", async () => {
    const s = submission();
    expect(await s.handle(message("ord-r"))).toEqual(COMPLETE);
    await s.retire("ord-r", "Processed");
    s.sent.length = 0;
    s.accepted.length = 0;

    expect(await s.handle(message("ord-r"))).toEqual(COMPLETE);
    expect(await s.states.get("ord-r")).toBeUndefined();
    expect(s.accepted).toEqual([]);
    expect(s.alerts).toEqual([]);
    expect(s.logger.events("submission.duplicateOfRetired")).toEqual([
      expect.objectContaining({
        orderId: "ord-r",
        finalState: "Processed",
        retiredAt: "2026-03-01T00:05:00.000Z",
        purgedAt: "2026-04-01T00:00:00.000Z",
        attempt: 2,
      }),
    ]);
    expect(s.logger.events("submission.accepted")).toHaveLength(1);
    // The status it finished with, as sent then: its attempt, so the same message id.
    expect(s.sent).toEqual([
      {
        replyTo: "status-app",
        message: expect.objectContaining({ orderId: "ord-r", status: "completed", attempt: 2 }),
      },
    ]);
    expect(statusMessageId(s.sent[0]?.message as StatusMessage)).toBe("ord-r:2:completed");
  });

  it("answers a compensated order with compensated, and a resend that names no replyTo with nothing", async () => {
    const s = submission();
    await s.handle(message("ord-c"));
    await s.retire("ord-c", "Compensated");
    s.sent.length = 0;
    expect(await s.handle(message("ord-c"))).toEqual(COMPLETE);
    expect(s.sent.map((m) => m.message.status)).toEqual(["compensated"]);

    await s.handle(message("ord-quiet", null));
    await s.retire("ord-quiet", "Processed");
    s.sent.length = 0;
    expect(await s.handle(message("ord-quiet", null))).toEqual(COMPLETE);
    expect(s.sent).toEqual([]);
    expect(await s.states.get("ord-quiet")).toBeUndefined();
  });

  it("still dead-letters a resend whose order data conflict with the order kept in the orders database", async () => {
    const s = submission();
    await s.handle(message("ord-x"));
    await s.retire("ord-x", "Processed");
    const other = message("ord-x");
    const changed = { ...(other.body as { [field: string]: JsonValue }), customerId: "cust-2" };
    const disposition = await s.handle({ ...other, body: changed, messageId: orderMessageId(changed) });
    expect(disposition).toMatchObject({ action: "deadLetter", reason: "ConflictingOrder" });
    expect(s.logger.events("submission.duplicateOfRetired")).toEqual([]);
  });

  it("F24-8: dead-letters a resend naming another replyTo as a conflict, and sends the final status nowhere", async () => {
    const s = submission();
    await s.handle(message("ord-mine"));
    await s.retire("ord-mine", "Processed");
    await s.handle(message("ord-none", null));
    await s.retire("ord-none", "Compensated");
    expect(await s.states.getRetired("ord-mine")).toMatchObject({ replyTo: "status-app" });
    expect(await s.states.getRetired("ord-none")).toMatchObject({ replyTo: null });
    s.sent.length = 0;

    // Another submitter's queue, or a queue where the order named none: as for a live order, a conflict.
    for (const [orderId, replyTo, kept] of [
      ["ord-mine", "status-thief", "status-app"],
      ["ord-none", "status-thief", "none"],
      ["ord-mine", null, "status-app"],
    ] as const) {
      expect(await s.handle(message(orderId, replyTo))).toEqual({
        action: "deadLetter",
        reason: "ConflictingOrder",
        description: expect.stringContaining(`with a different replyTo (${kept})`),
      });
    }
    expect(s.sent).toEqual([]);
    expect(s.alerts.map((a) => a.kind)).toEqual(["ConflictingOrder", "ConflictingOrder", "ConflictingOrder"]);
    expect(s.logger.events("submission.duplicateOfRetired")).toEqual([]);
    // Its own queue still hears how it finished.
    expect(await s.handle(message("ord-mine"))).toEqual(COMPLETE);
    expect(s.sent.map((m) => [m.replyTo, m.message.status])).toEqual([["status-app", "completed"]]);
  });

  it("F24-8: completes a resend of an order whose tombstone predates kept replyTos, sending nothing", async () => {
    const s = submission();
    await s.handle(message("ord-old"));
    await s.retire("ord-old", "Processed");
    // A tombstone as written before migration 13: its replyTo was not kept.
    db?.prepare("UPDATE retired_orders SET reply_to = NULL, reply_to_kept = 0 WHERE order_id = ?").run(
      "ord-old",
    );
    expect(await s.states.getRetired("ord-old")).not.toHaveProperty("replyTo");
    s.sent.length = 0;
    expect(await s.handle(message("ord-old", "status-thief"))).toEqual(COMPLETE);
    expect(s.sent).toEqual([]);
    expect(s.logger.events("submission.duplicateOfRetired")).toEqual([
      expect.objectContaining({ orderId: "ord-old", replyTo: "status-thief", replyToUnknown: true }),
    ]);
  });

  it("accepts an order with neither record nor tombstone, and a live duplicate as before", async () => {
    const s = submission();
    expect(await s.handle(message("ord-new"))).toEqual(COMPLETE);
    expect(await s.handle(message("ord-new"))).toEqual(COMPLETE);
    expect((await s.states.get("ord-new"))?.processState).toBe("Pending");
    expect(s.logger.events("submission.accepted")).toHaveLength(1);
    expect(s.logger.events("submission.duplicate")).toHaveLength(1);
    expect(s.accepted).toEqual(["ord-new", "ord-new"]);
    expect(await s.states.getRetired("ord-new")).toBeUndefined();
  });
});
