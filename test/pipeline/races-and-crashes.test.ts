import { describe, expect, it } from "vitest";
import { SqliteLease } from "../../laptop/sqlite/sqlite-lease.js";
import { LoggingAlertSink } from "../../src/adapters/logging/logging-alert-sink.js";
import { QueueStatusNotifier } from "../../src/adapters/messaging/queue-status-notifier.js";
import { seededRandom } from "../../src/domain/backoff.js";
import { orderFromMessage } from "../../src/domain/order.js";
import { toInstant } from "../../src/domain/time.js";
import { createStarter } from "../../src/scheduler/starter.js";
import { DEAD_LETTER_REASONS } from "../../src/scheduler/submission.js";
import { updateAsRead } from "../../src/state/record-updates.js";
import { createSupervisor } from "../../src/supervisor/supervisor.js";
import {
  orderMessage,
  post,
  recordOf,
  runUntil,
  type Scenario,
  scenarioPerTest,
  settle,
  terminal,
} from "./pipeline-harness.js";

const openScenario = scenarioPerTest();

const open = (options: { start?: boolean } = {}): Promise<Scenario> => openScenario({}, options);

describe("submission", () => {
  it("heals a crash between the two writes when the message is delivered again", async () => {
    const s = await open();
    // The first delivery wrote the order and died before the state record.
    await s.pipeline.orders.insertIfAbsent(orderFromMessage(orderMessage("ord-half")));
    expect(await s.pipeline.states.get("ord-half")).toBeUndefined();
    await post(s, orderMessage("ord-half"));
    await runUntil(s, terminal(s, "ord-half"));
    expect((await recordOf(s, "ord-half")).processState).toBe("Processed");
  });

  it("dead-letters invalid and conflicting messages with their reasons, alerts, and overwrites nothing", async () => {
    const s = await open();
    await post(s, orderMessage("ord-a"));
    await runUntil(s, terminal(s, "ord-a"));
    const before = await recordOf(s, "ord-a");
    await post(s, { ...orderMessage("ord-b"), items: [] });
    await post(s, orderMessage("ord-a", { customerId: "someone-else" }));
    await post(s, orderMessage("ord-a", { replyTo: "another-queue" }));
    await post(s, orderMessage("ord-a")); // an exact resend: a duplicate, not a conflict
    await settle(s);
    const deadLetters = await s.pipeline.ordersQueue.deadLetterQueue.peek(10);
    expect(deadLetters.map((m) => m.deadLetterReason)).toEqual([
      DEAD_LETTER_REASONS.invalid,
      DEAD_LETTER_REASONS.conflict,
      DEAD_LETTER_REASONS.conflict,
    ]);
    expect(deadLetters[0]?.deadLetterErrorDescription).toContain("items: must hold 1 to 100 items");
    expect(deadLetters[1]?.deadLetterErrorDescription).toContain("customerId");
    expect(deadLetters[2]?.deadLetterErrorDescription).toContain("replyTo");
    expect(s.pipeline.alerts.raised.map((a) => a.kind)).toEqual([
      "InvalidMessage",
      "ConflictingOrder",
      "ConflictingOrder",
    ]);
    expect(await recordOf(s, "ord-a")).toEqual(before);
    expect((await s.pipeline.orders.get("ord-a"))?.customerId).toBe("cust-1");
    expect(await s.pipeline.states.get("ord-b")).toBeUndefined();
  });
});

describe("starter", () => {
  it("lets the Supervisor recover a crash between claim and start, counting no failure against the order", async () => {
    const s = await open({ start: false });
    const consumerless = s.pipeline;
    await consumerless.orders.insertIfAbsent(orderFromMessage(orderMessage("ord-claimed")));
    const { newPendingRecord } = await import("../../src/domain/state-record.js");
    await consumerless.states.createIfAbsent(
      newPendingRecord({
        order: orderFromMessage(orderMessage("ord-claimed")),
        replyTo: null,
        now: toInstant(s.clock.now()),
        retryBudgetLimit: s.settings.retryBudgetPerOrder,
        undoReserve: s.settings.undoReservePerOrder,
      }),
    );
    // The starter claims, then dies before it starts the orchestration.
    const pending = await recordOf(s, "ord-claimed");
    const claim = await updateAsRead(consumerless.states, pending, "starter", {
      type: "claim",
      now: toInstant(s.clock.now()),
      attemptTimeoutMs: s.settings.attemptTimeoutMs,
    });
    expect(claim.ok).toBe(true);
    consumerless.start();
    await runUntil(s, terminal(s, "ord-claimed"), { stepMs: 5_000 });
    const record = await recordOf(s, "ord-claimed");
    expect(record).toMatchObject({ processState: "Processed", attempt: 2, failureCount: 0 });
    expect(await s.pipeline.runtime.getStatus("ord-claimed:1")).toBeUndefined();
  });

  it("claims each record exactly once when two starters race", async () => {
    const s = await open({ start: false });
    const ids = Array.from({ length: 20 }, (_, i) => `ord-race-${i}`);
    const { newPendingRecord } = await import("../../src/domain/state-record.js");
    for (const id of ids) {
      const order = orderFromMessage(orderMessage(id));
      await s.pipeline.orders.insertIfAbsent(order);
      await s.pipeline.states.createIfAbsent(
        newPendingRecord({
          order,
          replyTo: null,
          now: toInstant(s.clock.now()),
          retryBudgetLimit: 400,
          undoReserve: 0,
        }),
      );
    }
    const starter = () =>
      createStarter({
        states: s.pipeline.states,
        clock: s.clock,
        logger: s.logger,
        attemptTimeoutMs: s.settings.attemptTimeoutMs,
        maxInFlight: 1_000,
        pageSize: 3,
        startRetryDelayMs: 1_000,
      });
    const [a, b] = await Promise.all([starter()(s.pipeline.runtime), starter()(s.pipeline.runtime)]);
    expect((a?.claimed ?? 0) + (b?.claimed ?? 0)).toBe(20);
    expect((a?.startFailures ?? 0) + (b?.startFailures ?? 0)).toBe(0);
    s.pipeline.start();
    await runUntil(s, terminal(s, ...ids));
    for (const id of ids)
      expect(await recordOf(s, id)).toMatchObject({ processState: "Processed", attempt: 1 });
    expect(s.partner.ledger().effects).toBe(4 * ids.length);
  });

  it("claims no more than MAX_IN_FLIGHT at once", async () => {
    const s = await openScenario({ MAX_IN_FLIGHT: "2" }, { start: false });
    s.partner.setFaults({ transient: 1 });
    s.pipeline.start();
    for (let i = 0; i < 5; i++) await post(s, orderMessage(`ord-cap-${i}`));
    await runUntil(s, () => s.logger.events("step.started").length >= 2, { stepMs: 10 });
    expect(await s.pipeline.states.countProcessing()).toBe(2);
    s.partner.setFaults({});
    await runUntil(s, terminal(s, ...Array.from({ length: 5 }, (_, i) => `ord-cap-${i}`)));
  });
});

/** Every first attempt has stopped: its Agent spent its allowance and the orchestration gave up. */
async function gaveUp(s: Scenario, ids: readonly string[]): Promise<boolean> {
  for (const id of ids) {
    if ((await s.pipeline.runtime.getStatus(`${id}:1`))?.runtimeStatus !== "Completed") return false;
  }
  return true;
}

/** A Supervisor of the scenario's stores with its own lease name: sharing the name is leader election. */
function supervisorFor(s: Scenario, holder: string, leaseName: string) {
  return createSupervisor({
    states: s.pipeline.states,
    lease: new SqliteLease(s.db, s.clock, leaseName),
    alerts: new LoggingAlertSink(s.logger),
    notifier: new QueueStatusNotifier((name) => s.pipeline.queue(name)),
    clock: s.clock,
    random: seededRandom(3),
    logger: s.logger,
    holder,
    policy: s.settings.recovery,
    pageSize: 2,
    maxPages: 10,
    leaseMs: 30_000,
  });
}

/**
 * A scenario whose own Supervisor never runs, so a test can run its own. Its partner refuses every call
 * so the attempts give up; the circuit breaker would defer them instead, so it is off here.
 */
const openWithoutSupervisor = (): Promise<Scenario> =>
  openScenario({ BREAKER_ENABLED: "false" }, { supervisorIntervalMs: 1_000_000_000 });

describe("Supervisor", () => {
  it("recovers each expired attempt once when two Supervisors scan at the same time", async () => {
    const s = await openWithoutSupervisor();
    s.partner.setFaults({ transient: 1 });
    const ids = Array.from({ length: 6 }, (_, i) => `ord-sup-${i}`);
    for (const id of ids) await post(s, orderMessage(id));
    await runUntil(s, () => gaveUp(s, ids), { stepMs: 100 });
    await s.clock.advance(s.settings.attemptTimeoutMs);
    const supervisor = (holder: string, leaseName: string) => supervisorFor(s, holder, leaseName);
    // Sharing a lease: one scans, the other stands aside.
    const [one, two] = await Promise.all([supervisor("sup-1", "lead")(), supervisor("sup-2", "lead")()]);
    expect([one.skipped, two.skipped].sort()).toEqual([false, true]);
    expect(one.resets + two.resets).toBe(6);
    for (const id of ids) {
      const record = await recordOf(s, id);
      expect(record).toMatchObject({ processState: "Pending", failureCount: 1 });
    }
  });

  it("never recovers a record twice, even when the lease is not shared", async () => {
    const s = await openWithoutSupervisor();
    s.partner.setFaults({ transient: 1 });
    const ids = Array.from({ length: 6 }, (_, i) => `ord-dual-${i}`);
    for (const id of ids) await post(s, orderMessage(id));
    await runUntil(s, () => gaveUp(s, ids), { stepMs: 100 });
    await s.clock.advance(s.settings.attemptTimeoutMs);
    const supervisor = (holder: string) => supervisorFor(s, holder, `lease-of-${holder}`);
    const [one, two] = await Promise.all([supervisor("a")(), supervisor("b")()]);
    expect(one.skipped || two.skipped).toBe(false);
    expect(one.resets + two.resets).toBe(6);
    expect(one.lostRaces + two.lostRaces).toBeGreaterThan(0); // they did collide, and the loser wrote nothing
    for (const id of ids) expect((await recordOf(s, id)).failureCount).toBe(1);
  });
});
