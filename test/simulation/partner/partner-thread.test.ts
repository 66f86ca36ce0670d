import { describe, expect, it } from "vitest";
import { startPartnerThread } from "../../../laptop/simulation/partner/partner-thread.js";
import { PARTNER_KEY_HEADER } from "../../../partner/control-contract.js";
import { MemoryLogger } from "../../../src/adapters/logging/json-logger.js";

async function call(url: string, operation: string, key: string, orderId: string, accessKey?: string) {
  const response = await fetch(`${url}/operations/${operation}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "idempotency-key": key,
      ...(accessKey ? { [PARTNER_KEY_HEADER]: accessKey } : {}),
    },
    body: JSON.stringify({ orderId }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the partner on its own thread", () => {
  it("answers calls, applies each key once, and reports its ledger across the thread", async () => {
    const logger = new MemoryLogger("info");
    const partner = await startPartnerThread({ logger, seed: 3 });
    try {
      const first = await call(partner.url, "chargePayment", "o-1:chargePayment", "o-1");
      const again = await call(partner.url, "chargePayment", "o-1:chargePayment", "o-1");
      expect(first.status).toBe(200);
      expect(again.body).toMatchObject({ reference: first.body.reference, replayed: true });
      const ledger = await partner.ledger();
      expect(ledger.calls).toBe(2);
      expect(ledger.effects).toBe(1);
      expect(ledger.duplicateEffects).toBe(0);
      expect(ledger.callsForKey("o-1:chargePayment")).toBe(2);
      expect(ledger.effectsForKey("o-1:chargePayment")).toBe(1);
      expect(ledger.effectsByOrder["o-1"]?.map((e) => e.operation)).toEqual(["chargePayment"]);
      // Its log lines reach the host's logger, in batches.
      await until(() => logger.events("partner.call").length === 2);
      expect(logger.events("partner.call")[1]).toMatchObject({ idempotencyKey: "o-1:chargePayment" });
    } finally {
      await partner.close();
    }
  });

  it("takes new fault rates and forgets everything on reset", async () => {
    const partner = await startPartnerThread({ logger: new MemoryLogger() });
    try {
      await partner.setFaults({ transient: 1 });
      expect((await call(partner.url, "reserveInventory", "k", "o-2")).status).toBeGreaterThanOrEqual(429);
      await partner.setFaults({});
      expect((await call(partner.url, "reserveInventory", "k", "o-2")).status).toBe(200);
      await partner.reset();
      expect((await partner.ledger()).calls).toBe(0);
    } finally {
      await partner.close();
    }
  });

  it("takes an access key, and its faults and outages from the host across the thread", async () => {
    const partner = await startPartnerThread({
      logger: new MemoryLogger(),
      accessKey: "thread-key",
      seed: 3,
    });
    try {
      expect((await call(partner.url, "reserveInventory", "k", "o-4")).status).toBe(401);
      expect((await call(partner.url, "reserveInventory", "k", "o-4", "thread-key")).status).toBe(200);

      const changed = await partner.changeFaults({ slow: 0.5 });
      expect(changed.faults).toEqual({ transient: 0, permanent: 0, slow: 0.5, lostReply: 0 });
      await expect(partner.changeFaults({ slow: 2 })).rejects.toThrow(/faults\.slow/);
      await expect(partner.startOutage(0)).rejects.toThrow(RangeError);

      const down = await partner.startOutage(60);
      expect(down.outage).not.toBeNull();
      expect((await call(partner.url, "reserveInventory", "k2", "o-5", "thread-key")).status).toBe(503);
      expect((await partner.endOutage()).outage).toBeNull();
      const state = await partner.control();
      expect(state.changes.map((change) => `${change.change} by ${change.by}`)).toEqual([
        "faults by settings",
        "faults by operator",
        "outage by operator",
        "recovered by operator",
      ]);
      expect(await partner.ledger()).toMatchObject({ unauthorized: 1, outageRefusals: 1 });
    } finally {
      await partner.close();
    }
  });

  it("stops serving once closed", async () => {
    const partner = await startPartnerThread({ logger: new MemoryLogger() });
    await partner.close();
    await expect(call(partner.url, "reserveInventory", "k", "o-3")).rejects.toThrow();
    await expect(partner.ledger()).rejects.toThrow();
  });
});
