import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { createHttpPartnerControls } from "../../src/adapters/partner/http-partner-controls.js";

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Seen {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly key: unknown;
  readonly body: string;
}

/** A stand-in partner answering with `handler`, recording each request it saw. */
async function partner(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, key: req.headers["x-partner-key"], body });
      handler(req, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

const STATE = {
  faults: { transient: 0.5, permanent: 0, slow: 0, lostReply: 0 },
  outage: null,
  seed: 7,
  slowMs: 8000,
  changes: [],
};

describe("the partner's controls over HTTP", () => {
  it("calls each control route with the access key and gives the partner's answer, a 400 included", async () => {
    const { url, seen } = await partner((req, res) => {
      if (req.url === "/base/control/faults")
        json(res, 400, { error: "invalid-faults", message: "slow: at most 1" });
      else json(res, 200, STATE);
    });
    const controls = createHttpPartnerControls({
      url: `${url}/base/`,
      accessKey: "k-1",
      clock: new SystemClock(),
    });
    expect(await controls.status()).toEqual({ kind: "answer", status: 200, body: STATE });
    expect(await controls.setFaults({ slow: 2 })).toEqual({
      kind: "answer",
      status: 400,
      body: { error: "invalid-faults", message: "slow: at most 1" },
    });
    await controls.startOutage(30);
    await controls.endOutage();
    expect(seen).toEqual([
      { method: "GET", url: "/base/control", key: "k-1", body: "" },
      { method: "POST", url: "/base/control/faults", key: "k-1", body: '{"slow":2}' },
      { method: "POST", url: "/base/control/outage", key: "k-1", body: '{"seconds":30}' },
      { method: "DELETE", url: "/base/control/outage", key: "k-1", body: "" },
    ]);
  });

  it("sends no key when it has none", async () => {
    const { url, seen } = await partner((_req, res) => json(res, 200, STATE));
    await createHttpPartnerControls({ url, clock: new SystemClock() }).status();
    expect(seen[0]?.key).toBeUndefined();
  });

  it("refuses with no-partner-controls when the partner answers 404: a real partner has none", async () => {
    const { url } = await partner((_req, res) => json(res, 404, { error: "not found" }));
    const result = await createHttpPartnerControls({ url, clock: new SystemClock() }).status();
    expect(result).toEqual({
      kind: "refused",
      reason: "no-partner-controls",
      message: `the partner at ${url} has no control API (GET /control answered 404): only the simulated partner has one`,
    });
  });

  it("refuses with partner-refused-key on 401 or 403, with the partner's message", async () => {
    const { url } = await partner((req, res) =>
      req.headers["x-partner-key"] === undefined
        ? json(res, 401, { error: "unauthenticated", message: "x-partner-key is missing" })
        : json(res, 403, { error: "forbidden", message: "x-partner-key is not this partner's" }),
    );
    const clock = new SystemClock();
    expect(await createHttpPartnerControls({ url, clock }).endOutage()).toMatchObject({
      kind: "refused",
      reason: "partner-refused-key",
      message: expect.stringMatching(
        /refused DELETE \/control\/outage with 401: x-partner-key is missing; check PARTNER_ACCESS_KEY$/,
      ),
    });
    expect(await createHttpPartnerControls({ url, clock, accessKey: "wrong" }).status()).toMatchObject({
      reason: "partner-refused-key",
      message: expect.stringContaining("403: x-partner-key is not this partner's"),
    });
  });

  it("refuses with partner-unreachable when nothing listens", async () => {
    const { url } = await partner(() => undefined);
    const server = servers.pop();
    await new Promise((resolve) => server?.close(resolve));
    const result = await createHttpPartnerControls({ url, clock: new SystemClock() }).status();
    expect(result).toMatchObject({
      kind: "refused",
      reason: "partner-unreachable",
      message: expect.stringMatching(new RegExp(`^GET /control to ${url}: .*ECONNREFUSED`)),
    });
  });

  it("refuses with partner-unreachable when no answer comes in the time allowed, on its clock", async () => {
    const { url, seen } = await partner(() => undefined);
    const clock = new VirtualClock();
    const pending = createHttpPartnerControls({ url, clock, timeoutMs: 2_000 }).status();
    await expect.poll(() => seen.length).toBe(1);
    await clock.advance(2_000);
    expect(await pending).toEqual({
      kind: "refused",
      reason: "partner-unreachable",
      message: `GET /control to ${url}: no answer within 2000 ms`,
    });
  });

  it("refuses with partner-failed for an answer that is not the control API's", async () => {
    const { url } = await partner((req, res) =>
      req.method === "GET"
        ? res.writeHead(502).end("<html>bad gateway</html>")
        : json(res, 200, ["not", "an object"]),
    );
    const controls = createHttpPartnerControls({ url, clock: new SystemClock() });
    expect(await controls.status()).toEqual({
      kind: "refused",
      reason: "partner-failed",
      message: `the partner at ${url} answered GET /control with 502: <html>bad gateway</html>`,
    });
    expect(await controls.startOutage(5)).toMatchObject({ reason: "partner-failed" });
  });
});
