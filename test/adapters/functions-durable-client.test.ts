import azureFunctions, { type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { afterEach, describe, expect, it } from "vitest";
import {
  type DurableExtensionApi,
  startDurableExtensionApi,
} from "../../laptop/functions-host/durable-extension-api.js";
import type { OverridableStates } from "../../laptop/functions-host/host-config.js";
import {
  durableClientOf,
  FunctionsDurableClient,
  type SdkDurableClient,
} from "../../src/adapters/functions-host/durable-client.js";
import { InstanceAlreadyRunningError } from "../../src/ports/durable-client.js";
import { type Harness, openHarness } from "../durable/runtime-harness.js";
import { TEST_ORCHESTRATIONS as T } from "../support/durable-test-app.js";

/**
 * The Azure app's durable adapter through the real SDK client: `df.getClient(context)` on an invocation
 * whose `durableClient` binding carries the data the extension gives it, talking HTTP to the
 * extension's API as the local durable runtime answers it. No fake decides what the SDK throws.
 */
let harness: Harness | undefined;
let api: DurableExtensionApi | undefined;
afterEach(async () => {
  await api?.close();
  await harness?.runtime.close();
  harness?.db.close();
  api = undefined;
  harness = undefined;
});

async function open(overridableExistingInstanceStates?: OverridableStates) {
  harness = await openHarness();
  api = await startDurableExtensionApi({
    runtime: harness.runtime,
    ...(overridableExistingInstanceStates ? { overridableExistingInstanceStates } : {}),
  });
  const binding = df.input.durableClient();
  const context: InvocationContext = new azureFunctions.InvocationContext({
    functionName: "starter",
    options: { extraInputs: [binding] },
  });
  context.extraInputs.set(binding, api.clientData);
  const sdk = df.getClient(context);
  return { runtime: harness.runtime, client: durableClientOf(context), sdk };
}

const race = { step: "charge", timeoutMs: 60_000 };

describe("the durable adapter over the SDK client and the extension's HTTP API", () => {
  it("starts an instance, reads its status, and refuses a second start under a running id", async () => {
    const { runtime, client, sdk } = await open();
    expect(await client.startNew(T.race, { instanceId: "ord-1:1", input: race })).toBe("ord-1:1");
    await runtime.idle();
    expect(await client.getStatus("ord-1:1")).toMatchObject({
      instanceId: "ord-1:1",
      name: T.race,
      runtimeStatus: "Running",
      input: race,
    });
    await expect(client.startNew(T.race, { instanceId: "ord-1:1", input: race })).rejects.toBeInstanceOf(
      InstanceAlreadyRunningError,
    );
    // Asked directly, the API refuses too, and the SDK reports the status it got.
    await expect(sdk.startNew(T.race, { instanceId: "ord-1:1", input: race })).rejects.toThrow(
      "unexpected status code: 409",
    );
  });

  it("delivers an event to a waiting instance, which completes, and reports events it cannot deliver", async () => {
    const { runtime, client, sdk } = await open();
    await client.startNew(T.race, { instanceId: "ord-2:1", input: race });
    await runtime.idle();
    expect(await client.raiseEvent("ord-2:1", "reply-charge", { ok: true })).toEqual({ delivered: true });
    await runtime.waitForCompletion("ord-2:1");
    expect(await client.getStatus("ord-2:1")).toMatchObject({
      runtimeStatus: "Completed",
      output: { outcome: "reply", value: { ok: true } },
      failure: undefined,
    });
    expect(await client.raiseEvent("ord-2:1", "reply-charge", {})).toEqual({
      delivered: false,
      reason: "notRunning",
    });
    expect(await client.raiseEvent("ord-9:1", "reply-charge", {})).toEqual({
      delivered: false,
      reason: "notFound",
    });
    // The words the adapter recognises for an instance purged between its status read and the event
    // are the SDK's own, for the API's 404.
    await expect(sdk.raiseEvent("ord-9:1", "reply-charge", {})).rejects.toThrow("No instance with ID");
    // The API answers 410 for a finished instance, which the SDK takes without complaint.
    await expect(sdk.raiseEvent("ord-2:1", "reply-charge", {})).resolves.toBeUndefined();
  });

  it("reads an unknown instance as absent and a failed one with its failure", async () => {
    const { runtime, client } = await open();
    expect(await client.getStatus("nobody")).toBeUndefined();
    await client.startNew(T.unhandled, { instanceId: "ord-3:1" });
    await runtime.waitForCompletion("ord-3:1");
    const status = await client.getStatus("ord-3:1");
    expect(status?.runtimeStatus).toBe("Failed");
    expect(status?.failure).toContain("partner refused: card declined");
  });

  it("terminates a running instance, purges finished ones, and lists what finished before a time", async () => {
    const { runtime, client, sdk } = await open();
    await client.startNew(T.race, { instanceId: "ord-4:1", input: race });
    await client.startNew(T.sequence, { instanceId: "ord-5:1", input: 1 });
    await client.startNew(T.race, { instanceId: "ord-6:1", input: race });
    await runtime.idle();
    await client.terminate("ord-4:1", "operator stop");
    expect(await client.getStatus("ord-4:1")).toMatchObject({
      runtimeStatus: "Terminated",
      output: "operator stop",
    });
    await expect(sdk.terminate("ord-4:1", "again")).resolves.toBeUndefined(); // 410: already finished
    await expect(sdk.terminate("nobody", "stop")).rejects.toThrow("No instance with ID 'nobody' found.");
    const later = new Date(harness?.clock.now().getTime() ?? 0);
    later.setSeconds(later.getSeconds() + 1);
    expect([...(await client.listFinished({ createdBefore: later }))].sort()).toEqual(["ord-4:1", "ord-5:1"]);
    expect(await client.listFinished({ createdBefore: new Date("2000-01-01T00:00:00Z") })).toEqual([]);
    expect(await client.purge("ord-5:1")).toBe(true);
    expect(await client.purge("ord-5:1")).toBe(false);
    expect(await client.getStatus("ord-5:1")).toBeUndefined();
  });
});

describe("a start under an existing id, as host.json's overridableExistingInstanceStates has it", () => {
  const refusal =
    'The operation failed with an unexpected status code: 409. Details: {"Message":"An Orchestration instance with the status Running already exists."}';

  it.each<[OverridableStates | undefined, string]>([
    [undefined, "the extension's default"],
    ["NonRunningStates", "as this app's host.json sets it"],
  ])(
    "NonRunningStates (%s, %s): refuses a running instance with 409, replaces a finished one",
    async (setting) => {
      const { runtime, sdk } = await open(setting);
      await sdk.startNew(T.race, { instanceId: "ord-8:1", input: race });
      await runtime.idle();
      await expect(sdk.startNew(T.race, { instanceId: "ord-8:1", input: race })).rejects.toThrow(refusal);
      expect(await runtime.getStatus("ord-8:1")).toMatchObject({ runtimeStatus: "Running", input: race });

      await sdk.raiseEvent("ord-8:1", "reply-charge", { ok: true });
      await runtime.waitForCompletion("ord-8:1");
      const again = { step: "ship", timeoutMs: 60_000 };
      await expect(sdk.startNew(T.race, { instanceId: "ord-8:1", input: again })).resolves.toBe("ord-8:1");
      await runtime.idle();
      expect(await runtime.getStatus("ord-8:1")).toMatchObject({ runtimeStatus: "Running", input: again });
    },
  );

  it("AnyState: a start replaces the running instance, which runs anew from its new input", async () => {
    const { runtime, client, sdk } = await open("AnyState");
    await sdk.startNew(T.race, { instanceId: "ord-9:1", input: race });
    await runtime.idle();
    const replacement = { step: "ship", timeoutMs: 60_000 };
    await expect(sdk.startNew(T.race, { instanceId: "ord-9:1", input: replacement })).resolves.toBe(
      "ord-9:1",
    );
    await runtime.idle();
    expect(await runtime.getStatus("ord-9:1")).toMatchObject({
      runtimeStatus: "Running",
      input: replacement,
    });
    // It waits for its own step's reply, and completes with it.
    await sdk.raiseEvent("ord-9:1", "reply-ship", { shipped: true });
    expect(await runtime.waitForCompletion("ord-9:1")).toMatchObject({
      runtimeStatus: "Completed",
      output: { outcome: "reply", value: { shipped: true } },
    });
    // The adapter reads the status before it starts, so it refuses a running id whatever the setting.
    await client.startNew(T.race, { instanceId: "ord-9:2", input: race });
    await runtime.idle();
    await expect(client.startNew(T.race, { instanceId: "ord-9:2", input: race })).rejects.toBeInstanceOf(
      InstanceAlreadyRunningError,
    );
  });
});

describe("the SDK client's queries, purges and waits, as an app's HTTP starter uses them", () => {
  it("lists instances by creation time and state with getStatusBy, and purges finished ones with purgeInstanceHistoryBy", async () => {
    const { runtime, sdk } = await open();
    const clock = harness?.clock;
    if (!clock) throw new Error("no harness");
    const t0 = clock.now();
    await sdk.startNew(T.sequence, { instanceId: "early", input: 1 });
    clock.advance(60_000);
    const t1 = clock.now();
    await sdk.startNew(T.sequence, { instanceId: "late", input: 2 });
    await sdk.startNew(T.race, { instanceId: "waiting", input: race });
    await runtime.waitForCompletion("early");
    await runtime.waitForCompletion("late");
    await runtime.idle();
    const ids = (statuses: readonly { instanceId: string }[]) => statuses.map((s) => s.instanceId).sort();
    expect(ids(await sdk.getStatusBy({ createdTimeFrom: t1 }))).toEqual(["late", "waiting"]);
    expect(ids(await sdk.getStatusBy({ createdTimeFrom: t0, createdTimeTo: t1 }))).toEqual(["early"]);
    expect(ids(await sdk.getStatusBy({ runtimeStatus: [df.OrchestrationRuntimeStatus.Running] }))).toEqual([
      "waiting",
    ]);
    // Every instance matches; only the finished ones go, the running one stays.
    const purged = await sdk.purgeInstanceHistoryBy({ createdTimeFrom: t0 });
    expect(purged.instancesDeleted).toBe(2);
    expect(ids(await sdk.getStatusBy({}))).toEqual(["waiting"]);
    expect((await sdk.purgeInstanceHistoryBy({ createdTimeFrom: t0 })).instancesDeleted).toBe(0);
  });

  it("puts the key a host checks for the webhooks into every management link", async () => {
    const keyed = await startDurableExtensionApi({ webhookKey: "k/ey+1" });
    try {
      const links = Object.values(keyed.clientData.managementUrls).filter((link) => link.startsWith("http"));
      expect(links.length).toBeGreaterThan(3);
      for (const link of links) expect(new URL(link).searchParams.get("code")).toBe("k/ey+1");
    } finally {
      await keyed.close();
    }
  });

  it("signals an entity and reads its state with signalEntity and readEntityState", async () => {
    const { runtime, sdk } = await open();
    const tally = new df.EntityId("tally", "k");
    expect(await sdk.readEntityState(tally)).toMatchObject({ entityExists: false });
    await sdk.signalEntity(tally, "add", 2);
    await sdk.signalEntity(tally, "add", 3);
    await runtime.idle();
    expect(await sdk.readEntityState(tally)).toMatchObject({ entityExists: true, entityState: 5 });
  });

  it("answers an HTTP starter's wait with the output once the instance completes, or the check-status links", async () => {
    const { runtime, sdk } = await open();
    const request = new azureFunctions.HttpRequest({
      url: "http://localhost:7071/api/start",
      method: "POST",
    });
    await sdk.startNew(T.sequence, { instanceId: "quick", input: 3 });
    await runtime.waitForCompletion("quick");
    const done = await sdk.waitForCompletionOrCreateCheckStatusResponse(request, "quick", {
      timeoutInMilliseconds: 2_000,
      retryIntervalInMilliseconds: 50,
    });
    expect(done.status).toBe(200);
    expect(await done.json()).toBe(96);
    await sdk.startNew(T.race, { instanceId: "slow", input: race });
    const pending = await sdk.waitForCompletionOrCreateCheckStatusResponse(request, "slow", {
      timeoutInMilliseconds: 200,
      retryIntervalInMilliseconds: 50,
    });
    expect(pending.status).toBe(202);
    const links = (await pending.json()) as { id: string; statusQueryGetUri: string };
    expect(links.id).toBe("slow");
    // The links name the request's host, where the extension serves them; here its API stands in.
    const status = await fetch(links.statusQueryGetUri.replace("http://localhost:7071", `${api?.url}`));
    expect(status.status).toBe(202);
    expect(await status.json()).toMatchObject({ instanceId: "slow", runtimeStatus: "Running" });
  });
});

describe("the extension's HTTP API, asked what the SDK would never ask", () => {
  async function call(method: string, path: string, body?: string) {
    const response = await fetch(`${api?.url}/durabletask/${path}`, {
      method,
      ...(body === undefined ? {} : { body }),
    });
    return { status: response.status, body: (await response.json()) as { Message?: string } | null };
  }

  it("refuses with a status and a message that names the problem", async () => {
    const { runtime } = await open();
    await runtime.startNew(T.race, { instanceId: "ord-7:1", input: race });
    await runtime.idle();
    expect(await call("POST", "instances/ord-7:1/raiseEvent/reply-charge", "{not json")).toEqual({
      status: 400,
      body: { Message: "the event data is not JSON" },
    });
    expect(await call("POST", "orchestrators/noSuchOrchestration/x", "")).toMatchObject({
      status: 400,
      body: { Message: "no orchestration named noSuchOrchestration is registered" },
    });
    expect((await call("GET", "instances/?createdTimeTo=yesterday")).status).toBe(400);
    expect((await call("GET", "instances/%E0%A4%A")).status).toBe(400);
    expect((await call("PUT", "instances/ord-7:1")).status).toBe(404);
    expect(
      (await call("POST", `instances/ord-7:1/raiseEvent/big`, `"${"x".repeat(5 * 1024 * 1024)}"`)).status,
    ).toBe(413);
    // None of it touched the instance.
    expect((await runtime.getStatus("ord-7:1"))?.runtimeStatus).toBe("Running");
    expect(runtime.historyOf("ord-7:1").filter((e) => e.EventType === 15)).toEqual([]);
  });
});

describe("F24-9: an instance an operator suspended", () => {
  /** The adapter over an SDK client that reports every instance with `runtimeStatus`. */
  function clientReporting(runtimeStatus: string) {
    const calls: string[] = [];
    const sdk: SdkDurableClient = {
      startNew: async (_name, options) => {
        calls.push("startNew");
        return options?.instanceId ?? "";
      },
      raiseEvent: async () => void calls.push("raiseEvent"),
      getStatus: async (instanceId) => ({
        name: "orderProcessingV4",
        instanceId,
        createdTime: new Date("2026-01-01T00:00:00Z"),
        lastUpdatedTime: new Date("2026-01-01T00:01:00Z"),
        input: null,
        output: null,
        runtimeStatus,
      }),
      terminate: async () => undefined,
      purgeInstanceHistory: async () => ({ instancesDeleted: 0 }),
      getStatusBy: async () => [],
    };
    return { client: new FunctionsDurableClient(sdk), calls };
  }

  it("is Suspended, not Running: neither finished nor running", async () => {
    const { client } = clientReporting("Suspended");
    expect((await client.getStatus("ord-s:1"))?.runtimeStatus).toBe("Suspended");
    // Continued as new, it runs again.
    expect((await clientReporting("ContinuedAsNew").client.getStatus("ord-c:1"))?.runtimeStatus).toBe(
      "Running",
    );
  });

  it("is still active: no start over it, and an event raised to it is kept for when it resumes", async () => {
    const { client, calls } = clientReporting("Suspended");
    await expect(client.startNew("orderProcessingV4", { instanceId: "ord-s:1" })).rejects.toThrow(
      InstanceAlreadyRunningError,
    );
    expect(await client.raiseEvent("ord-s:1", "reply:reserveInventory:do", {})).toEqual({ delivered: true });
    expect(calls).toEqual(["raiseEvent"]);
  });
});
