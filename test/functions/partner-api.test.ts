import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FUNCTION_NAMES } from "../../src/functions/function-names.js";
import { AppUnderTest } from "../support/azure-app-under-test.js";

const STATE = {
  faults: { transient: 0, permanent: 0, slow: 0, lostReply: 0 },
  outage: null,
  seed: 7,
  slowMs: 15000,
  changes: [],
};

let server: Server;
let partnerUrl: string;
const seen: { method: string | undefined; url: string | undefined; key: unknown; body: string }[] = [];

beforeEach(async () => {
  seen.length = 0;
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, key: req.headers["x-partner-key"], body });
      const answer = req.url === "/control/faults" && body.includes("9") ? 400 : 200;
      res.writeHead(answer, { "content-type": "application/json" });
      res.end(JSON.stringify(answer === 200 ? STATE : { error: "invalid-faults", message: "transient: 9" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  partnerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function request(path: string, body?: string) {
  return {
    url: `http://localhost:7071${path}`,
    headers: new Headers({ "content-length": String(Buffer.byteLength(body ?? "")) }),
    text: async () => body ?? "",
  };
}

describe("the Functions app's partner controls", () => {
  it("reaches the partner at PARTNER_URL with PARTNER_ACCESS_KEY and passes its answers on", async () => {
    const app = new AppUnderTest({ PARTNER_URL: partnerUrl, PARTNER_ACCESS_KEY: "k-from-key-vault" });
    await app.open();
    try {
      const call = async (name: string, path: string, body?: string) =>
        (await app.invoke(name, request(path, body))) as { status: number; jsonBody: unknown };
      expect(await call(FUNCTION_NAMES.getPartner, "/api/partner")).toEqual({ status: 200, jsonBody: STATE });
      expect(await call(FUNCTION_NAMES.setPartnerFaults, "/api/partner/faults", '{"transient":9}')).toEqual({
        status: 400,
        jsonBody: { error: "invalid-faults", message: "transient: 9" },
      });
      expect(await call(FUNCTION_NAMES.startPartnerOutage, "/api/partner/outage", '{"seconds":60}')).toEqual({
        status: 200,
        jsonBody: STATE,
      });
      expect(await call(FUNCTION_NAMES.endPartnerOutage, "/api/partner/outage")).toEqual({
        status: 200,
        jsonBody: STATE,
      });
      const tooLarge = await call(FUNCTION_NAMES.setPartnerFaults, "/api/partner/faults", "x".repeat(5_000));
      expect(tooLarge).toMatchObject({ status: 413 });
      expect(seen).toEqual([
        { method: "GET", url: "/control", key: "k-from-key-vault", body: "" },
        { method: "POST", url: "/control/faults", key: "k-from-key-vault", body: '{"transient":9}' },
        { method: "POST", url: "/control/outage", key: "k-from-key-vault", body: '{"seconds":60}' },
        { method: "DELETE", url: "/control/outage", key: "k-from-key-vault", body: "" },
      ]);
    } finally {
      await app.close();
    }
  });

  it("answers 502 partner-unreachable when nothing answers at PARTNER_URL", async () => {
    const app = new AppUnderTest({ PARTNER_URL: "http://127.0.0.1:9" });
    await app.open();
    try {
      const answer = (await app.invoke(FUNCTION_NAMES.getPartner, request("/api/partner"))) as {
        status: number;
        jsonBody: { error: string; message: string };
      };
      expect(answer.status).toBe(502);
      expect(answer.jsonBody.error).toBe("partner-unreachable");
      expect(answer.jsonBody.message).toMatch(/^GET \/control to http:\/\/127\.0\.0\.1:9: /);
    } finally {
      await app.close();
    }
  });
});
