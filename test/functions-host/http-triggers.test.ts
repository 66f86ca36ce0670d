import type { IncomingMessage, ServerResponse } from "node:http";
import azureFunctions, { type HttpRequest, type InvocationContext } from "@azure/functions";
import { afterEach, describe, expect, it } from "vitest";
import { type HttpTriggers, startHttpTriggers } from "../../laptop/functions-host/http-triggers.js";
import { captureRegistrations } from "../../laptop/worker/registration-capture.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

const KEYS = {
  functionKey: "function-key-0123456789",
  masterKey: "master-key-0123456789",
  durableTaskKey: "durable-key-0123456789",
};
let server: HttpTriggers | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A small app of HTTP functions, captured as the host would load it. */
async function serve(
  durableWebhooks?: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; seen: { params: unknown; body: string; name: string }[] }> {
  const seen: { params: unknown; body: string; name: string }[] = [];
  const remember = async (request: HttpRequest, context: InvocationContext) => {
    seen.push({ params: request.params, body: await request.text(), name: context.functionName });
  };
  const registry = await captureRegistrations(() => {
    azureFunctions.app.http("getThing", {
      methods: ["GET"],
      route: "things/{thingId}",
      authLevel: "function",
      handler: async (request, context) => {
        await remember(request, context);
        return { status: 200, jsonBody: { thingId: request.params.thingId }, headers: { "x-from": "app" } };
      },
    });
    azureFunctions.app.http("postThing", {
      methods: ["POST"],
      route: "things/{thingId}/act",
      authLevel: "admin",
      handler: async (request, context) => {
        await remember(request, context);
        return new azureFunctions.HttpResponse({ status: 202, body: "done" });
      },
    });
    azureFunctions.app.http("getFile", {
      methods: ["GET"],
      route: "files/{file?}",
      authLevel: "anonymous",
      handler: async (request) => ({ jsonBody: { file: request.params.file ?? null } }),
    });
    azureFunctions.app.http("health", {
      methods: ["GET"],
      authLevel: "anonymous",
      handler: async () => ({ body: "ok" }),
    });
    azureFunctions.app.http("broken", {
      methods: ["GET"],
      authLevel: "anonymous",
      handler: async () => {
        throw new Error("the handler failed");
      },
    });
  });
  server = await startHttpTriggers({
    functions: registry.withTrigger("httpTrigger"),
    keys: KEYS,
    port: 0,
    host: "127.0.0.1",
    bindingData: () => undefined,
    logger: new MemoryLogger(),
    ...(durableWebhooks ? { durableWebhooks } : {}),
  });
  return { url: server.url, seen };
}

describe("the host's HTTP triggers", () => {
  it("routes /api/<route> with its parameters decoded, and writes the handler's answer", async () => {
    const { url, seen } = await serve();
    const response = await fetch(`${url}/api/Things/a%20b`, {
      headers: { "x-functions-key": KEYS.functionKey },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-from")).toBe("app");
    expect(await response.json()).toEqual({ thingId: "a b" });
    expect(seen).toEqual([{ params: { thingId: "a b" }, body: "", name: "getThing" }]);

    const posted = await fetch(`${url}/api/things/t1/act?code=${KEYS.masterKey}`, {
      method: "POST",
      body: "hello",
    });
    expect([posted.status, await posted.text()]).toEqual([202, "done"]);
    expect(seen[1]).toEqual({ params: { thingId: "t1" }, body: "hello", name: "postThing" });
    expect(await (await fetch(`${url}/api/health`)).text()).toBe("ok");
  });

  it("lets a trailing optional parameter be left out, as the host does, and no other", async () => {
    const { url } = await serve();
    expect(await (await fetch(`${url}/api/files`)).json()).toEqual({ file: null });
    expect(await (await fetch(`${url}/api/files/a.css`)).json()).toEqual({ file: "a.css" });
    expect((await fetch(`${url}/api/files/a/b`)).status).toBe(404);
    expect((await fetch(`${url}/api/things?code=${KEYS.masterKey}`)).status).toBe(404);
  });

  it("checks keys as the host does: a function key opens function routes, only the master key admin ones", async () => {
    const { url, seen } = await serve();
    const status = async (path: string, init: RequestInit = {}) =>
      (await fetch(`${url}${path}`, init)).status;
    expect(await status("/api/things/t1")).toBe(401);
    expect(await status("/api/things/t1", { headers: { "x-functions-key": "wrong" } })).toBe(401);
    expect(await status(`/api/things/t1?code=${KEYS.masterKey}`)).toBe(200);
    expect(await status(`/api/things/t1/act?code=${KEYS.functionKey}`, { method: "POST" })).toBe(401);
    expect(
      await status("/api/things/t1/act", { method: "POST", headers: { "x-functions-key": KEYS.masterKey } }),
    ).toBe(202);
    // Refused requests never reach a handler.
    expect(seen.map((s) => s.name)).toEqual(["getThing", "postThing"]);
  });

  it("answers 404 for an unknown path or method and 500 without a body when the handler throws", async () => {
    const { url } = await serve();
    expect((await fetch(`${url}/api/nothing`)).status).toBe(404);
    expect((await fetch(`${url}/things/t1?code=${KEYS.masterKey}`)).status).toBe(404);
    expect((await fetch(`${url}/api/health`, { method: "DELETE" })).status).toBe(404);
    const broken = await fetch(`${url}/api/broken`);
    expect([broken.status, await broken.text()]).toEqual([500, ""]);
  });

  it("F27-3: leads GET / to the dashboard: a page asking for the key in a form, or straight there with ?code=", async () => {
    const { url } = await serve();
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toMatch(
      /<form method="get" action="\/api\/dashboard">[\s\S]*name="code" type="password"[\s\S]*<\/form>/,
    );
    const keyed = await fetch(`${url}/?code=a%20key`, { redirect: "manual" });
    expect([keyed.status, keyed.headers.get("location")]).toEqual([302, "/api/dashboard?code=a%20key"]);
    expect((await fetch(`${url}/`, { method: "POST" })).status).toBe(404);
  });

  it("hands the extension's webhooks to its API when they carry its system key or the master key", async () => {
    const asked: string[] = [];
    const { url } = await serve((req, res) => {
      asked.push(req.url ?? "");
      res.writeHead(202).end();
    });
    const path = "/runtime/webhooks/durabletask/instances/order-1";
    expect((await fetch(`${url}${path}?code=${KEYS.durableTaskKey}`)).status).toBe(202);
    expect((await fetch(`${url}${path}`, { headers: { "x-functions-key": KEYS.masterKey } })).status).toBe(
      202,
    );
    expect((await fetch(`${url}${path}?code=${KEYS.functionKey}`)).status).toBe(401);
    expect((await fetch(`${url}${path}`)).status).toBe(401);
    expect(asked).toEqual([`${path}?code=${KEYS.durableTaskKey}`, path]);
  });

  it("answers 404 under the webhooks' path when no extension API is given", async () => {
    const { url } = await serve();
    expect(
      (await fetch(`${url}/runtime/webhooks/durabletask/instances/x?code=${KEYS.durableTaskKey}`)).status,
    ).toBe(404);
  });
});
