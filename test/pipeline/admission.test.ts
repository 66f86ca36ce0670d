import { describe, expect, it } from "vitest";
import { startHttpApi } from "../../laptop/embedded/http-api.js";
import type { JsonValue } from "../../src/ports/message-queue.js";
import { orderMessage, post, recordOf, runUntil, scenarioPerTest, terminal } from "./pipeline-harness.js";

const openScenario = scenarioPerTest();

describe("admission visible to submitters", () => {
  it("answers 429 with Retry-After once the Pending backlog reaches MAX_PENDING, accepts again when it drains, and loses nothing", async () => {
    const s = await openScenario({ MAX_PENDING: "3", MAX_IN_FLIGHT: "1" });
    const api = await startHttpApi({
      port: 0,
      logger: s.logger,
      backend: s.pipeline.apiBackend(),
    });
    try {
      // The partner is down: one order is claimed at a time, the others wait as Pending.
      s.partner.setFaults({ transient: 1 });
      const accepted = ["ord-a1", "ord-a2", "ord-a3", "ord-a4"];
      for (const orderId of accepted) await post(s, orderMessage(orderId));
      await runUntil(s, async () => (await s.pipeline.states.countInState("Pending")) >= 3, { stepMs: 10 });

      const submit = (orderId: string) =>
        fetch(`${api.url}/api/orders`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(orderMessage(orderId) as unknown as JsonValue),
        });
      const refused = await submit("ord-late");
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(await refused.json()).toMatchObject({ error: "too many pending orders", maxPending: 3 });

      s.partner.setFaults({});
      await runUntil(s, terminal(s, ...accepted));
      expect((await submit("ord-late")).status).toBe(202);
      await runUntil(s, terminal(s, ...accepted, "ord-late"));
      for (const orderId of [...accepted, "ord-late"]) {
        expect((await recordOf(s, orderId)).processState).toBe("Processed");
      }
    } finally {
      await api.close();
    }
  });
});
