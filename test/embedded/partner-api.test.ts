import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type HttpApi, startHttpApi } from "../../laptop/embedded/http-api.js";
import type { PartnerControls, PartnerControlsResult } from "../../src/ports/partner-controls.js";
import { type IdlePipeline, openIdlePipeline } from "../support/idle-pipeline.js";

const TOKEN = "a-token-of-16-chars";
const STATE = { faults: { transient: 0.5, permanent: 0, slow: 0, lostReply: 0 }, outage: null, seed: 7 };

let idle: IdlePipeline;
let api: HttpApi;
const asked: unknown[][] = [];

/** Controls that record each call and answer with the state. */
const controls: PartnerControls = (() => {
  const answer =
    (name: string) =>
    async (...args: unknown[]): Promise<PartnerControlsResult> => {
      asked.push([name, ...args]);
      return { kind: "answer", status: 200, body: STATE };
    };
  return {
    status: answer("status"),
    setFaults: answer("setFaults"),
    startOutage: answer("startOutage"),
    endOutage: answer("endOutage"),
  };
})();

beforeEach(async () => {
  asked.length = 0;
  idle = await openIdlePipeline();
  api = await startHttpApi({
    port: 0,
    apiToken: TOKEN,
    logger: idle.logger,
    backend: idle.pipeline.apiBackend(),
    partner: controls,
  });
});
afterEach(async () => {
  await api.close();
  await idle.close();
});

function call(method: string, path: string, options: { body?: string; token?: string } = {}) {
  return fetch(`${api.url}${path}`, {
    method,
    headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
}

describe("the embedded host's partner controls", () => {
  it("serves the state to anyone, and each change only with the API token", async () => {
    const read = await call("GET", "/api/partner");
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(STATE);
    for (const [method, path] of [
      ["POST", "/api/partner/faults"],
      ["POST", "/api/partner/outage"],
      ["DELETE", "/api/partner/outage"],
    ] as const) {
      const refused = await call(method, path, { body: '{"seconds":5}', token: "wrong-token-16-chars" });
      expect(refused.status, `${method} ${path}`).toBe(401);
      expect(refused.headers.get("www-authenticate")).toBe("Bearer");
    }
    expect(asked).toEqual([["status"]]);
    expect((await call("POST", "/api/partner/faults", { body: '{"slow":0.1}', token: TOKEN })).status).toBe(
      200,
    );
    expect((await call("POST", "/api/partner/outage", { body: '{"seconds":30}', token: TOKEN })).status).toBe(
      200,
    );
    expect((await call("DELETE", "/api/partner/outage", { token: TOKEN })).status).toBe(200);
    expect(asked.slice(1)).toEqual([["setFaults", { slow: 0.1 }], ["startOutage", 30], ["endOutage"]]);
  });

  it("answers 405 with Allow for a wrong method, 404 under /api/partner for any other path, 413 past 4 KiB", async () => {
    const wrong = await call("PUT", "/api/partner/outage", { token: TOKEN });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST, DELETE");
    expect((await call("DELETE", "/api/partner")).headers.get("allow")).toBe("GET");
    expect((await call("GET", "/api/partner/faults")).status).toBe(405);
    expect((await call("GET", "/api/partnerships")).status).toBe(404);
    const large = await call("POST", "/api/partner/faults", { body: "x".repeat(5_000), token: TOKEN });
    expect(large.status).toBe(413);
    expect(asked).toEqual([]);
  });

  it("says there are no partner controls when it was given none", async () => {
    const bare = await startHttpApi({ port: 0, logger: idle.logger, backend: idle.pipeline.apiBackend() });
    try {
      const answer = await fetch(`${bare.url}/api/partner`);
      expect(answer.status).toBe(404);
      expect(await answer.json()).toMatchObject({ error: "no-partner-controls" });
    } finally {
      await bare.close();
    }
  });
});
