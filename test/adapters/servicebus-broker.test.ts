import { ServiceBusClient } from "@azure/service-bus";
import Long from "long";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ServiceBusTestBroker } from "../support/servicebus-broker/index.js";

/** What the adapter does not exercise, driven through the SDK directly. */
describe("ServiceBusTestBroker", () => {
  let broker: ServiceBusTestBroker;
  let client: ServiceBusClient;

  beforeEach(async () => {
    broker = await ServiceBusTestBroker.start();
    broker.createQueue("orders", { maxDeliveryCount: 5 });
    client = new ServiceBusClient(broker.connectionString, {
      retryOptions: { maxRetries: 0, timeoutInMs: 5_000 },
    });
  });
  afterEach(async () => {
    await client.close();
    await broker.close();
  });

  it("settles through $management a message whose receiving link has closed", async () => {
    await client.createSender("orders").sendMessages([
      { messageId: "done", body: 1 },
      { messageId: "bad", body: 2 },
    ]);
    const first = client.createReceiver("orders", { maxAutoLockRenewalDurationInMs: 0 });
    const [done, bad] = await first.receiveMessages(2, { maxWaitTimeInMs: 1_000 });
    if (!done || !bad) throw new Error("expected two messages");
    await first.close();

    const second = client.createReceiver("orders", { maxAutoLockRenewalDurationInMs: 0 });
    await second.completeMessage(done);
    await second.deadLetterMessage(bad, { deadLetterReason: "Invalid", deadLetterErrorDescription: "why" });
    expect(await second.peekMessages(10, { fromSequenceNumber: Long.ONE })).toEqual([]);

    const [dead] = await client
      .createReceiver("orders", { subQueueType: "deadLetter" })
      .peekMessages(10, { fromSequenceNumber: Long.ONE });
    expect(dead).toMatchObject({
      messageId: "bad",
      deadLetterReason: "Invalid",
      deadLetterErrorDescription: "why",
      deadLetterSource: "orders",
    });
  });

  it("keeps delivering on one receiver past the 2048 deliveries a session buffers", async () => {
    const sender = client.createSender("orders");
    const receiver = client.createReceiver("orders", { maxAutoLockRenewalDurationInMs: 0 });
    let completed = 0;
    for (let batch = 0; batch < 21; batch++) {
      await sender.sendMessages(Array.from({ length: 100 }, (_, i) => ({ body: batch * 100 + i })));
      for (let left = 100; left > 0; ) {
        const messages = await receiver.receiveMessages(left, { maxWaitTimeInMs: 2_000 });
        if (messages.length === 0) throw new Error(`nothing received after ${completed} messages`);
        for (const message of messages) await receiver.completeMessage(message);
        completed += messages.length;
        left -= messages.length;
      }
    }
    expect(completed).toBe(2_100);
  });

  it("refuses a sender to a queue that does not exist", async () => {
    await expect(client.createSender("missing").sendMessages({ body: 1 })).rejects.toMatchObject({
      code: "MessagingEntityNotFound",
    });
  });
});
