import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { chaosSchedule } from "../../../laptop/simulation/chaos/chaos-schedule.js";
import { startSender } from "../../../laptop/simulation/chaos/order-sender.js";
import { seededRandom } from "../../../src/domain/backoff.js";

describe("the chaos schedule", () => {
  const plan = { orders: 1_000, rate: 50, kills: 10, partnerOutages: 3 };

  it("is the same for the same seed, and another for another seed", () => {
    expect(chaosSchedule(plan, seededRandom(7))).toEqual(chaosSchedule(plan, seededRandom(7)));
    expect(chaosSchedule(plan, seededRandom(7))).not.toEqual(chaosSchedule(plan, seededRandom(8)));
  });

  it("kills during sending and after it, and takes the partner down while orders are being sent", () => {
    const { kills, outages } = chaosSchedule(plan, seededRandom(3));
    const sending = plan.orders / plan.rate;
    expect(kills).toHaveLength(10);
    expect(outages).toHaveLength(3);
    expect(kills.map((k) => k.at)).toEqual([...kills.map((k) => k.at)].sort((a, b) => a - b));
    for (const kill of kills) {
      expect(kill.at).toBeGreaterThanOrEqual(1);
      expect(kill.at).toBeLessThanOrEqual(sending + 10);
      expect(kill.downSeconds).toBeGreaterThanOrEqual(0.2);
    }
    for (const outage of outages) expect(outage).toBeLessThanOrEqual(sending);
  });

  it("with --upgrade, strikes the first kill in the first third of the sending, the others where they fell", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const plain = chaosSchedule(plan, seededRandom(seed));
      const upgrade = chaosSchedule({ ...plan, upgrade: true }, seededRandom(seed));
      const sending = plan.orders / plan.rate;
      expect(upgrade.kills[0]?.at).toBeLessThanOrEqual(sending / 3);
      expect(upgrade.kills[0]?.at).toBe(Math.min(plain.kills[0]?.at ?? 0, sending / 3));
      expect(upgrade.kills.slice(1)).toEqual(plain.kills.slice(1));
    }
  });
});

describe("the open-loop sender", () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it("sends every order again until it is answered 202, and reports a valid order refused", async () => {
    const seen = new Map<string, number>();
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        const { orderId } = JSON.parse(body) as { orderId: string };
        const n = (seen.get(orderId) ?? 0) + 1;
        seen.set(orderId, n);
        if (orderId === "bad") res.writeHead(400).end("invalid order message");
        else if (n === 1 && orderId.endsWith("1"))
          req.socket.destroy(); // killed mid-request
        else if (n <= 2 && orderId.endsWith("2")) res.writeHead(429).end();
        else res.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let down = true;
    setTimeout(() => (down = false), 100);
    const ids = ["o-0", "o-1", "o-2", "bad"];
    const sender = startSender({
      count: ids.length,
      orderAt: (i) => ({ orderId: ids[i] ?? "", body: JSON.stringify({ orderId: ids[i] }) }),
      rate: 100,
      target: () => (down ? null : url),
      retryMs: 20,
    });
    const report = await sender.done;
    expect([...report.accepted].sort()).toEqual(["o-0", "o-1", "o-2"]);
    expect([...report.refused.keys()]).toEqual(["bad"]);
    expect(report.retries).toBe(3);
    expect(seen.get("o-1")).toBe(2);
    expect(seen.get("o-2")).toBe(3);
    expect(sender.outstanding()).toBe(0);
  });
});
