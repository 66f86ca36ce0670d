import { describe, expect, it } from "vitest";
import { InstanceAlreadyRunningError } from "../../ports/durable-client.js";
import { FunctionsDurableClient, type SdkDurableClient, type SdkStatus } from "./durable-client.js";
import { inboundFromTrigger } from "./inbound-message.js";

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

class FakeSdk implements SdkDurableClient {
  readonly statuses = new Map<string, SdkStatus>();
  readonly started: string[] = [];
  readonly raised: string[] = [];
  raiseError: Error | undefined;

  async startNew(name: string, options?: { instanceId?: string }): Promise<string> {
    const id = options?.instanceId ?? "";
    this.started.push(id);
    this.statuses.set(id, status(id, "Running", name));
    return id;
  }
  async raiseEvent(instanceId: string, eventName: string): Promise<void> {
    if (this.raiseError) throw this.raiseError;
    this.raised.push(`${instanceId}/${eventName}`);
  }
  async getStatus(instanceId: string): Promise<SdkStatus> {
    const found = this.statuses.get(instanceId);
    if (!found)
      throw new Error("DurableClient error: Durable Functions extension replied with HTTP 404 response.");
    return found;
  }
  async terminate(): Promise<void> {}
  async purgeInstanceHistory(instanceId: string): Promise<{ instancesDeleted: number }> {
    return { instancesDeleted: this.statuses.delete(instanceId) ? 1 : 0 };
  }
  readonly filters: { createdTimeTo?: Date; runtimeStatus?: string[] }[] = [];
  async getStatusBy(filter: { createdTimeTo?: Date; runtimeStatus?: string[] }): Promise<SdkStatus[]> {
    this.filters.push(filter);
    return [...this.statuses.values()].filter(
      (s) =>
        (!filter.runtimeStatus || filter.runtimeStatus.includes(s.runtimeStatus)) &&
        (!filter.createdTimeTo || s.createdTime < filter.createdTimeTo),
    );
  }
}

function status(instanceId: string, runtimeStatus: string, name = "orderProcessing"): SdkStatus {
  const at = new Date("2026-01-01T00:00:00Z");
  return {
    name,
    instanceId,
    runtimeStatus,
    createdTime: at,
    lastUpdatedTime: at,
    input: null,
    output: "boom",
  };
}

describe("FunctionsDurableClient", () => {
  it("lists the finished instances created before a time, whatever the SDK calls finished", async () => {
    const sdk = new FakeSdk();
    for (const [id, runtimeStatus] of [
      ["a:1", "Completed"],
      ["b:1", "Failed"],
      ["c:1", "Terminated"],
      ["d:1", "Canceled"],
      ["e:1", "Running"],
      ["f:1", "Pending"],
    ] as const) {
      sdk.statuses.set(id, status(id, runtimeStatus));
    }
    const client = new FunctionsDurableClient(sdk);
    expect(await client.listFinished({ createdBefore: new Date("2026-01-02T00:00:00Z") })).toEqual([
      "a:1",
      "b:1",
      "c:1",
      "d:1",
    ]);
    expect(await client.listFinished({ createdBefore: new Date("2026-01-01T00:00:00Z") })).toEqual([]);
  });

  it("refuses to start an id that is running, where the extension would silently replace it", async () => {
    const sdk = new FakeSdk();
    const client = new FunctionsDurableClient(sdk);
    await client.startNew("orderProcessing", { instanceId: "ord-1:1" });
    await expect(client.startNew("orderProcessing", { instanceId: "ord-1:1" })).rejects.toBeInstanceOf(
      InstanceAlreadyRunningError,
    );
    sdk.statuses.set("ord-1:1", status("ord-1:1", "Completed"));
    await expect(client.startNew("orderProcessing", { instanceId: "ord-1:1" })).resolves.toBe("ord-1:1");
    expect(sdk.started).toEqual(["ord-1:1", "ord-1:1"]);
  });

  it("reports events for unknown, finished and purged instances instead of dropping them silently", async () => {
    const sdk = new FakeSdk();
    const client = new FunctionsDurableClient(sdk);
    expect(await client.raiseEvent("none", "e")).toEqual({ delivered: false, reason: "notFound" });
    sdk.statuses.set("done", status("done", "Completed"));
    expect(await client.raiseEvent("done", "e")).toEqual({ delivered: false, reason: "notRunning" });
    sdk.statuses.set("live", status("live", "Running"));
    expect(await client.raiseEvent("live", "e")).toEqual({ delivered: true });
    sdk.raiseError = new Error("No instance with ID 'live' found.");
    expect(await client.raiseEvent("live", "e")).toEqual({ delivered: false, reason: "notFound" });
    sdk.raiseError = new Error("network down");
    await expect(client.raiseEvent("live", "e")).rejects.toThrow("network down");
    expect(sdk.raised).toEqual(["live/e"]);
  });

  it("maps statuses: unknown is undefined, failures carry their output, suspended counts as running", async () => {
    const sdk = new FakeSdk();
    const client = new FunctionsDurableClient(sdk);
    expect(await client.getStatus("none")).toBeUndefined();
    sdk.statuses.set("f", status("f", "Failed"));
    expect(await client.getStatus("f")).toMatchObject({ runtimeStatus: "Failed", failure: "boom" });
    sdk.statuses.set("s", status("s", "Suspended"));
    expect((await client.getStatus("s"))?.runtimeStatus).toBe("Running");
    expect(await client.purge("s")).toBe(true);
    expect(await client.purge("s")).toBe(false);
  });
});
