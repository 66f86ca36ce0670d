import { describe, expect, it } from "vitest";
import type { DurableClient } from "../../src/ports/durable-client.js";
import { orderMessage, post, recordOf, runUntil, scenarioPerTest, terminal } from "./pipeline-harness.js";

const openScenario = scenarioPerTest();

/** A durable client whose `startNew` fails while `down` is set, as during an outage of the task hub. */
function outage(runtime: DurableClient) {
  const state = { down: true, refused: 0 };
  const client: DurableClient = {
    startNew: async (name, options) => {
      if (state.down) {
        state.refused++;
        throw new Error("the durable backend is unavailable");
      }
      return runtime.startNew(name, options);
    },
    raiseEvent: (...args) => runtime.raiseEvent(...args),
    getStatus: (id) => runtime.getStatus(id),
    terminate: (id, reason) => runtime.terminate(id, reason),
    purge: (id) => runtime.purge(id),
    listFinished: (filter) => runtime.listFinished(filter),
  };
  return { state, client };
}

describe("infrastructure is not the order's fault", () => {
  it("processes every order once a durable-client outage of 10 x MAX_RECOVERIES attempt timeouts clears", async () => {
    let backend: ReturnType<typeof outage> | undefined;
    const s = await openScenario(
      { MAX_RECOVERIES: "2" },
      {
        wrapDurableClient: (runtime) => {
          backend = outage(runtime);
          return backend.client;
        },
      },
    );
    const ids = ["ord-out-1", "ord-out-2", "ord-out-3"];
    for (const id of ids) await post(s, orderMessage(id));
    const outageMs = 10 * 2 * s.settings.attemptTimeoutMs;
    const start = s.clock.now().getTime();
    await runUntil(s, () => s.clock.now().getTime() - start >= outageMs, {
      stepMs: 5_000,
      maxMs: outageMs + 5_000,
    });
    for (const id of ids) {
      const record = await recordOf(s, id);
      expect(record.processState).not.toBe("Error");
      expect(record.failureCount).toBe(0);
    }
    expect(backend?.state.refused).toBeGreaterThan(ids.length * 10);

    if (backend) backend.state.down = false;
    await runUntil(s, terminal(s, ...ids));
    for (const id of ids) {
      expect(await recordOf(s, id)).toMatchObject({ processState: "Processed", failureCount: 0 });
    }
    expect(s.partner.ledger().effects).toBe(4 * ids.length);
  });
});
