import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { HttpTimeoutError, MAX_ANSWER_BYTES, postJson } from "../../src/agents/http-post.js";

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<URL> {
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => handler(req, res, body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/operations/x`);
}

describe("postJson", () => {
  it("sends the body and headers, and returns the status and the whole answer", async () => {
    const url = await serve((req, res, body) => {
      res.writeHead(201, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          got: JSON.parse(body),
          key: req.headers["idempotency-key"],
          type: req.headers["content-type"],
        }),
      );
    });
    const answer = await postJson(url, { "idempotency-key": "k-1" }, JSON.stringify({ orderId: "é" }), {
      clock: new SystemClock(),
      timeoutMs: 5_000,
    });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toEqual({ got: { orderId: "é" }, key: "k-1", type: "application/json" });
  });

  it("gives up with a timeout when no answer comes in the time allowed on the clock", async () => {
    const clock = new VirtualClock();
    const url = await serve(() => undefined); // never answers
    const call = postJson(url, {}, "{}", { clock, timeoutMs: 1_000 });
    const outcome = call.then(
      () => "answered",
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 20)); // the request reaches the server
    await clock.advance(999);
    await clock.advance(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(HttpTimeoutError);
    expect((error as Error).message).toBe("no answer within 1000 ms");
  });

  it("fails, not as a timeout, when the connection is dropped before the answer", async () => {
    const url = await serve((req) => req.socket.destroy());
    const error = await postJson(url, {}, "{}", { clock: new VirtualClock(), timeoutMs: 1_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(HttpTimeoutError);
  });

  it("fails when the answer is cut off half way", async () => {
    const url = await serve((req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("only part of it");
      setTimeout(() => req.socket.destroy(), 10);
    });
    const error = await postJson(url, {}, "{}", { clock: new VirtualClock(), timeoutMs: 1_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(HttpTimeoutError);
    expect((error as Error).message).toBe("the answer was cut off");
  });

  it("keeps its connections to a host open and reuses them", async () => {
    const ports = new Set<number>();
    const url = await serve((req, res) => {
      ports.add(req.socket.remotePort ?? 0);
      res.end("ok");
    });
    const clock = new SystemClock();
    // A connection is free again only on the turn after an answer ends, so calls made back to back
    // take turns on two.
    for (let i = 0; i < 6; i++) await postJson(url, {}, "{}", { clock, timeoutMs: 5_000 });
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it("refuses an answer larger than it reads, without waiting for the rest", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(MAX_ANSWER_BYTES + 1, 120));
    });
    const error = await postJson(url, {}, "{}", { clock: new VirtualClock(), timeoutMs: 1_000 }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  });
});
