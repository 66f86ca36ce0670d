import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { SharedBreaker } from "../../src/breaker/shared-breaker.js";
import type { BreakerStatus } from "../../src/domain/circuit-breaker.js";
import { registerBreakerGauge } from "../../src/telemetry/instruments.js";
import { MemoryBreakerStore } from "../support/memory-breaker-store.js";
import { type RecordedTelemetry, recordTelemetry } from "../support/telemetry.js";

let recorded: RecordedTelemetry | undefined;
afterEach(async () => {
  await recorded?.shutdown();
  recorded = undefined;
});

/** The gauge's value per operation, at one collection. */
async function observed(telemetry: RecordedTelemetry): Promise<Record<string, unknown>> {
  const points = await telemetry.points("sas.breaker.state");
  return Object.fromEntries(points.map((p) => [String(p.attributes["sas.operation"]), p.value]));
}

describe("the sas.breaker.state gauge", () => {
  it("observes each operation's status as 0, 1 or 2, read again at every collection", async () => {
    recorded = recordTelemetry();
    const statuses = new Map<string, BreakerStatus>([
      ["reserveInventory", "closed"],
      ["chargePayment", "open"],
    ]);
    let reads = 0;
    registerBreakerGauge(recorded.telemetry, () => {
      reads++;
      return statuses;
    });

    expect(await observed(recorded)).toEqual({ reserveInventory: 0, chargePayment: 2 });
    statuses.set("chargePayment", "half-open");
    statuses.set("refundPayment", "open");
    expect(await observed(recorded)).toEqual({ reserveInventory: 0, chargePayment: 1, refundPayment: 2 });
    expect(reads).toBe(2);
  });

  it("shows what a shared breaker last saw, with no request to its store", async () => {
    recorded = recordTelemetry();
    const store = new MemoryBreakerStore();
    const breaker = new SharedBreaker({
      store,
      clock: new VirtualClock(),
      logger: new MemoryLogger(),
      policy: {
        failureRun: 2,
        failureRate: 0.5,
        minCalls: 20,
        windowMs: 10_000,
        openMs: 1_000,
        maxOpenMs: 8_000,
        probeLeaseMs: 2_000,
      },
    });
    registerBreakerGauge(recorded.telemetry, () => breaker.knownStatuses());
    expect(await observed(recorded)).toEqual({});

    for (let i = 0; i < 2; i++) {
      const decision = await breaker.admit("chargePayment");
      if (decision.decision === "defer") throw new Error("the breaker opened too early");
      await breaker.record(decision.ticket, "transient");
    }
    const ok = await breaker.admit("reserveInventory");
    if (ok.decision === "defer") throw new Error("reserveInventory has no failures");
    await breaker.record(ok.ticket, "succeeded");

    const requests = store.reads + store.writes;
    expect(await observed(recorded)).toEqual({ chargePayment: 2, reserveInventory: 0 });
    expect(store.reads + store.writes).toBe(requests);
  });
});
