import { describe, expect, it } from "vitest";
import {
  FunctionsDurableClient,
  type SdkDurableClient,
} from "../../../src/adapters/functions-host/durable-client.js";
import { inboundFromTrigger } from "../../../src/adapters/functions-host/inbound-message.js";
import { InstanceAlreadyRunningError } from "../../../src/ports/durable-client.js";

describe("inboundFromTrigger", () => {
  const metadata = {
    messageId: "m-1",
    deliveryCount: 3,
    enqueuedTimeUtc: "2026-01-01T00:00:00Z",
    correlationId: "ord-1",
    applicationProperties: { tenant: "a", nested: { no: 1 }, flag: true },
  };

  it("reads the delivery facts from the trigger metadata", () => {
    expect(inboundFromTrigger({ orderId: "ord-1" }, { triggerMetadata: metadata })).toEqual({
      messageId: "m-1",
      body: { orderId: "ord-1" },
      deliveryCount: 3,
      enqueuedTime: new Date("2026-01-01T00:00:00Z"),
      correlationId: "ord-1",
      applicationProperties: { tenant: "a", flag: true },
    });
  });

  it("parses a JSON body that arrives as bytes, and keeps text as it arrives for the handler to judge", () => {
    const json = JSON.stringify({ orderId: "x" });
    expect(inboundFromTrigger(new TextEncoder().encode(json), {}).body).toEqual({ orderId: "x" });
    expect(inboundFromTrigger("{not json", {}).body).toBe("{not json");
    // The worker hands over a body that was the JSON string `"{\"orderId\":\"x\"}"` as this text:
    // decoding it again would turn a string into an object.
    expect(inboundFromTrigger(json, {}).body).toBe(json);
    expect(inboundFromTrigger(undefined, {})).toMatchObject({ body: null, deliveryCount: 1, messageId: "" });
  });
});

/**
 * States the local durable runtime never produces (suspended, cancelled), read by the adapter from an
 * SDK answer; every other path of the adapter runs against the real SDK client and the extension's
 * HTTP API in test/adapters/functions-durable-client.test.ts.
 */
function sdkAnswering(runtimeStatus: string): SdkDurableClient {
  const at = new Date("2026-01-01T00:00:00Z");
  const unused = () => Promise.reject(new Error("not used by this test"));
  return {
    getStatus: async (instanceId) => ({
      name: "orderProcessing",
      instanceId,
      runtimeStatus,
      createdTime: at,
      lastUpdatedTime: at,
      input: null,
      output: null,
    }),
    startNew: unused,
    raiseEvent: unused,
    terminate: unused,
    purgeInstanceHistory: unused,
    getStatusBy: unused,
  };
}

describe("FunctionsDurableClient", () => {
  it("F24-9: keeps suspended instances apart, counts continued-as-new ones as running and cancelled ones as terminated", async () => {
    for (const [sdkStatus, port] of [
      ["Suspended", "Suspended"],
      ["ContinuedAsNew", "Running"],
      ["Canceled", "Terminated"],
      ["Pending", "Pending"],
    ] as const) {
      const client = new FunctionsDurableClient(sdkAnswering(sdkStatus));
      expect((await client.getStatus("x"))?.runtimeStatus).toBe(port);
    }
    const running = new FunctionsDurableClient(sdkAnswering("Suspended"));
    await expect(running.startNew("orderProcessing", { instanceId: "x" })).rejects.toBeInstanceOf(
      InstanceAlreadyRunningError,
    );
  });
});
