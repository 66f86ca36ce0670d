import { describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../src/config/names.js";
import { orderMessage, post, recordOf, runUntil, scenarioPerTest, terminal } from "./pipeline-harness.js";

const openScenario = scenarioPerTest();

describe.each(["activity", "queue"] as const)("the Agent as %s", (mode) => {
  it("processes orders, every reply delivered twice, each effect once", async () => {
    const s = await openScenario({ AGENT_MODE: mode }, { duplicateReplies: 1 });
    const ids = ["ord-f1", "ord-f2", "ord-f3"];
    for (const id of ids) await post(s, orderMessage(id));
    await runUntil(s, terminal(s, ...ids));
    for (const id of ids) {
      const record = await recordOf(s, id);
      expect(record).toMatchObject({ processState: "Processed", attempt: 1 });
      expect(record.compensationLog).toHaveLength(4);
    }
    expect(s.partner.ledger()).toMatchObject({ effects: 12, duplicateEffects: 0 });
    if (mode === "queue") {
      expect(s.logger.events("agent.reply.delivered")).toHaveLength(24); // 12 replies, each twice
      expect(await s.pipeline.queue(QUEUE_NAMES.agentRequests).peek(10)).toEqual([]);
    }
  });

  /** The activities each episode of the order's first attempt scheduled, by episode. */
  function scheduledByEpisode(s: Awaited<ReturnType<typeof openScenario>>, instanceId: string): string[][] {
    return s.db
      .prepare<[string], { events: string }>(
        "SELECT events FROM df_history WHERE instance_id = ? ORDER BY episode",
      )
      .all(instanceId)
      .map((row) =>
        (JSON.parse(row.events) as { EventType: number; Name?: string }[])
          .filter((event) => event.EventType === 4)
          .map((event) => event.Name ?? ""),
      );
  }

  it("costs, under version 4, one activity and two episodes an attempt whose steps fit in the first one's deadline in the Agent's activity form; three activities a step in its queue form", async () => {
    const s = await openScenario({ AGENT_MODE: mode });
    await post(s, orderMessage("ord-work"));
    await runUntil(s, terminal(s, "ord-work"));
    expect(await recordOf(s, "ord-work")).toMatchObject({ processState: "Processed", workflowVersion: 4 });
    const episodes = scheduledByEpisode(s, "ord-work:1");
    if (mode === "activity") {
      expect(episodes).toEqual([["orderStartAttempt"], []]);
      return;
    }
    expect(episodes.flat()).toEqual([
      "orderStartAttempt",
      ...["reserveInventory", "chargePayment", "arrangeShipment", "notifyCustomer"].flatMap(() => [
        "orderSendAgentRequest",
        "orderAdvance",
      ]),
    ]);
    // The request sent, the reply's event and the step recorded, an episode each at most.
    expect(episodes.length).toBeLessThanOrEqual(14);
  });

  it("costs, under version 3, one activity and one orchestration episode per step in the Agent's activity form", async () => {
    const s = await openScenario({ AGENT_MODE: mode, WORKFLOW_VERSION: "3" });
    await post(s, orderMessage("ord-work"));
    await runUntil(s, terminal(s, "ord-work"));
    expect(await recordOf(s, "ord-work")).toMatchObject({ processState: "Processed", workflowVersion: 3 });
    const episodes = scheduledByEpisode(s, "ord-work:1");
    if (mode === "activity") {
      expect(episodes.flat()).toEqual(["orderStartAttempt", "orderRunStep", "orderRunStep", "orderRunStep"]);
      expect(episodes).toHaveLength(5);
    } else expect(episodes.flat().filter((name) => name === "orderAdvance")).toHaveLength(4);
  });

  it("keeps the order's personal and payment fields out of the durable histories, undos included", async () => {
    const s = await openScenario({ AGENT_MODE: mode });
    s.partner.setFaults({ transient: 0.3, permanent: 0.2, slow: 0, lostReply: 0 });
    const ids = Array.from({ length: 8 }, (_, i) => `ord-pii-${i}`);
    for (const id of ids) await post(s, orderMessage(id, { customerId: "cust-secret-4471" }));
    await runUntil(s, terminal(s, ...ids), { stepMs: 100 });
    const states = await Promise.all(ids.map(async (id) => (await recordOf(s, id)).processState));
    expect(states).toContain("Processed");
    expect(states).toContain("Compensated");
    expect(s.partner.ledger().undos).toBeGreaterThan(0);
    const histories = s.db
      .prepare<[], { events: string }>("SELECT events FROM df_history")
      .all()
      .map((row) => row.events)
      .join("\n");
    expect(histories).toContain("orderStartAttempt");
    expect(histories).not.toContain("cust-secret-4471");
    expect(histories).not.toContain("amountMinor");
  });

  it("recovers from a partner that is down for longer than a step's deadline", async () => {
    const s = await openScenario({ AGENT_MODE: mode });
    s.partner.setFaults({ transient: 1 });
    await post(s, orderMessage("ord-outage"));
    await runUntil(s, async () => (await recordOf(s, "ord-outage")).failureCount >= 1);
    s.partner.setFaults({});
    await runUntil(s, terminal(s, "ord-outage"));
    expect(await recordOf(s, "ord-outage")).toMatchObject({ processState: "Processed", failureCount: 1 });
    expect(s.partner.ledger().duplicateEffects).toBe(0);
  });
});
