import * as azureFunctions from "@azure/functions";
import * as df from "durable-functions";
import { describe, expect, it } from "vitest";
import { durableFunctionsOf } from "../../laptop/extension-host/function-manifest.js";
import { runInvocation } from "../../laptop/extension-host/worker-invocation.js";
import { captureRegistrations } from "../../laptop/worker/registration-capture.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

/** An app of each kind of function the extension host is told about, and one it is not. */
function registerApp(seen: unknown[]) {
  df.app.orchestration("flow", function* (context) {
    return yield context.df.callActivity("plain", "from flow");
  });
  df.app.activity("plain", {
    handler: (input: unknown) => {
      seen.push(input);
      if (input === "fail") throw new Error("the activity refuses");
      return typeof input === "number" ? input * 2 : { echoed: input };
    },
  });
  df.app.activity("withClient", {
    extraInputs: [df.input.durableClient()],
    handler: (_input: unknown, context: azureFunctions.InvocationContext) =>
      df.getClient(context).taskHubName,
  });
  df.app.entity("counter", (context) => context.df.setState(1));
  azureFunctions.app.http("web", { handler: () => ({ status: 204 }) });
}

describe("the extension host's worker side", () => {
  it("tells the extension host each orchestration, activity and entity the app registered, and which take a client", async () => {
    const registry = await captureRegistrations(() => registerApp([]));
    expect(durableFunctionsOf(registry)).toEqual([
      { name: "flow", kind: "orchestration", durableClient: false },
      { name: "plain", kind: "activity", durableClient: false },
      { name: "withClient", kind: "activity", durableClient: true },
      { name: "counter", kind: "entity", durableClient: false },
    ]);
  });

  it("refuses a durable client of another task hub, which the one binding data could not serve", async () => {
    const registry = await captureRegistrations(() =>
      df.app.activity("elsewhere", {
        extraInputs: [{ ...df.input.durableClient(), taskHub: "OtherHub" }],
        handler: () => null,
      }),
    );
    expect(() => durableFunctionsOf(registry)).toThrow(
      /function elsewhere: a durable client of another task hub/,
    );
  });

  it("runs an invocation through @azure/functions' invocation model: typed data in, typed data out", async () => {
    const seen: unknown[] = [];
    const registry = await captureRegistrations(() => registerApp(seen));
    const plain = registry.get("plain");
    if (!plain) throw new Error("not registered");
    const logger = new MemoryLogger();
    const run = (trigger: Record<string, unknown>) =>
      runInvocation(plain, { invocationId: "1", trigger }, logger);

    // A string input as the host passes it; JSON as json; a number back as int, an object as json.
    expect(await run({ string: "Tokyo" })).toEqual({ ok: true, returnValue: { json: '{"echoed":"Tokyo"}' } });
    expect(await run({ json: '{"at":"2026-01-01T00:00:00.000Z"}' })).toEqual({
      ok: true,
      returnValue: { json: '{"echoed":{"at":"2026-01-01T00:00:00.000Z"}}' },
    });
    expect(await run({ json: "21" })).toEqual({ ok: true, returnValue: { int: 42 } });
    expect(seen).toEqual(["Tokyo", { at: "2026-01-01T00:00:00.000Z" }, 21]);
    // A handler that throws: its message and stack, as the worker reports a failure.
    const failed = await run({ string: "fail" });
    expect(failed).toMatchObject({ ok: false, error: "the activity refuses" });
    expect(failed.ok ? "" : failed.stack).toMatch(/^Error: the activity refuses\n\s+at /);
  });

  it("hands a client input the binding data the extension host sends with the invocation", async () => {
    const registry = await captureRegistrations(() => registerApp([]));
    const withClient = registry.get("withClient");
    if (!withClient) throw new Error("not registered");
    const webhooks = "http://127.0.0.1:7071/runtime/webhooks/durabletask";
    const clientData = {
      taskHubName: "SentHub",
      creationUrls: { createNewInstancePostUri: `${webhooks}/orchestrators/{functionName}` },
      managementUrls: { id: "INSTANCEID", statusQueryGetUri: `${webhooks}/instances/INSTANCEID` },
      baseUrl: webhooks,
      requiredQueryStringParameters: "code=key",
      rpcBaseUrl: "http://127.0.0.1:17071/durabletask/",
    };
    const result = await runInvocation(
      withClient,
      {
        invocationId: "2",
        trigger: { json: "null" },
        inputs: { durableClient: { string: JSON.stringify(clientData) } },
      },
      new MemoryLogger(),
    );
    expect(result).toEqual({ ok: true, returnValue: { string: "SentHub" } });
  });
});
