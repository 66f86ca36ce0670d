import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendToServiceBus } from "../../laptop/cli/send-to-service-bus.js";
import { ServiceBusStandIn } from "../../laptop/stand-ins/servicebus-broker/index.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { createServiceBusClient } from "../../src/adapters/servicebus/service-bus-client.js";
import { ServiceBusMessageQueue } from "../../src/adapters/servicebus/service-bus-queue.js";
import { parseOrderMessage } from "../../src/domain/order.js";

let broker: ServiceBusStandIn;
let dir: string;
beforeAll(async () => {
  broker = await ServiceBusStandIn.start();
  broker.createQueue("orders");
  dir = mkdtempSync(join(tmpdir(), "sas-send-"));
});
afterAll(async () => {
  await broker.close();
  rmSync(dir, { recursive: true, force: true });
});

async function peekAll(): Promise<unknown[]> {
  const client = createServiceBusClient({ connectionString: broker.connectionString });
  const queue = new ServiceBusMessageQueue(client, "orders", {}, { clock: new SystemClock() });
  try {
    return (await queue.peek(100)).map((m) => m.body);
  } finally {
    await queue.close();
    await client.close();
  }
}

describe("sas send", () => {
  it("posts valid orders to the Service Bus queue with the connection from local.settings.json", async () => {
    writeFileSync(
      join(dir, "local.settings.json"),
      JSON.stringify({ Values: { ServiceBusConnection: broker.connectionString } }),
    );
    const result = await sendToServiceBus({
      env: {},
      cwd: dir,
      queueName: "orders",
      count: 3,
      seed: 5,
      replyTo: "order-status",
    });
    expect(result).toMatchObject({ queue: "orders", sent: 3 });
    const bodies = await peekAll();
    expect(bodies).toHaveLength(3);
    for (const body of bodies) expect(parseOrderMessage(JSON.stringify(body)).ok).toBe(true);
  });

  it("names both settings when no connection is configured", async () => {
    const empty = mkdtempSync(join(tmpdir(), "sas-send-empty-"));
    const attempt = sendToServiceBus({
      env: {},
      cwd: empty,
      queueName: "orders",
      count: 1,
      seed: 1,
      replyTo: "x",
    });
    await expect(attempt).rejects.toThrow(
      /ServiceBusConnection or ServiceBusConnection__fullyQualifiedNamespace/,
    );
    rmSync(empty, { recursive: true, force: true });
  });
});
