import azureFunctions from "@azure/functions";
import { ServiceBusClient } from "@azure/service-bus";
import Long from "long";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ServiceBusTriggers,
  startServiceBusTriggers,
} from "../../laptop/functions-host/service-bus-triggers.js";
import { ServiceBusStandIn } from "../../laptop/stand-ins/servicebus-broker/index.js";
import { captureRegistrations } from "../../laptop/worker/registration-capture.js";
import { inboundFromTrigger } from "../../src/adapters/functions-host/inbound-message.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

let broker: ServiceBusStandIn | undefined;
let client: ServiceBusClient | undefined;
let triggers: ServiceBusTriggers | undefined;
afterEach(async () => {
  await triggers?.close();
  await client?.close();
  await broker?.close();
  triggers = undefined;
  client = undefined;
  broker = undefined;
});

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the host's Service Bus triggers", () => {
  it("hand the body and metadata to the handler, complete on return, abandon on throw, and the broker dead-letters", async () => {
    broker = await ServiceBusStandIn.start();
    broker.createQueue("work", { maxDeliveryCount: 3 });
    client = new ServiceBusClient(broker.connectionString);
    const seen: { body: unknown; metadata: Record<string, unknown> }[] = [];
    const registry = await captureRegistrations(() => {
      azureFunctions.app.serviceBusQueue("worker", {
        connection: "Bus",
        queueName: "%WORK_QUEUE%",
        handler: async (message, context) => {
          seen.push({ body: message, metadata: { ...context.triggerMetadata } });
          if ((message as { poison?: boolean }).poison) throw new Error("cannot handle it");
        },
      });
    });
    const busClient = client;
    const logger = new MemoryLogger();
    triggers = startServiceBusTriggers({
      functions: registry.withTrigger("serviceBusTrigger"),
      clientFor: (connection) => {
        expect(connection).toBe("Bus");
        return busClient;
      },
      resolve: (text) => text.replace("%WORK_QUEUE%", "work"),
      maxConcurrentCalls: 4,
      maxAutoLockRenewalDurationInMs: 60_000,
      bindingData: () => undefined,
      logger,
    });
    await client.createSender("work").sendMessages([
      { messageId: "m-1", body: { n: 1 }, correlationId: "c-1", applicationProperties: { tenant: "a" } },
      { messageId: "m-2", body: { poison: true } },
    ]);
    await until(() => seen.filter((s) => s.metadata.messageId === "m-2").length === 3);

    const first = seen.find((s) => s.metadata.messageId === "m-1");
    expect(first?.body).toEqual({ n: 1 });
    // What the app's handlers read from it.
    expect(inboundFromTrigger(first?.body, { triggerMetadata: first?.metadata ?? {} })).toMatchObject({
      messageId: "m-1",
      body: { n: 1 },
      deliveryCount: 1,
      correlationId: "c-1",
      applicationProperties: { tenant: "a" },
    });
    expect(seen.filter((s) => s.metadata.messageId === "m-2").map((s) => s.metadata.deliveryCount)).toEqual([
      1, 2, 3,
    ]);

    const receiver = client.createReceiver("work");
    const [deadLettered] = await client
      .createReceiver("work", { subQueueType: "deadLetter" })
      .peekMessages(5, { fromSequenceNumber: Long.ONE });
    expect(deadLettered).toMatchObject({ messageId: "m-2", deadLetterReason: "MaxDeliveryCountExceeded" });
    expect(await receiver.peekMessages(5, { fromSequenceNumber: Long.ONE })).toEqual([]);
  });
});
