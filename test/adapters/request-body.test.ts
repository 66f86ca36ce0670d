import { Agent, createServer, type IncomingMessage, request, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { readBodyUpTo } from "../../src/adapters/web/request-body.js";

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

/** A server that reads each body with a limit of 16 bytes and answers what it read; counts its connections. */
async function serve(
  seen: (outcome: Buffer | undefined | Error) => void,
): Promise<{ port: number; server: Server; connections: () => number }> {
  const server = createServer((req: IncomingMessage, res) => {
    readBodyUpTo(req, 16).then(
      (body) => {
        seen(body);
        res.end(body === undefined ? "too large" : `read ${body.toString("utf8")}`);
      },
      (error: Error) => seen(error),
    );
  });
  let connections = 0;
  server.on("connection", () => {
    connections++;
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { port: address.port, server, connections: () => connections };
}

/** POSTs `body` on one kept-alive connection per call of the agent given; resolves with the answer. */
function post(port: number, body: string, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const call = request({ host: "127.0.0.1", port, method: "POST", path: "/", agent });
    call.once("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.once("end", () => resolve(text));
    });
    call.once("error", reject);
    call.end(body);
  });
}

describe("readBodyUpTo", () => {
  it("reads a whole body within the limit, and refuses one past it while keeping the connection usable", async () => {
    const outcomes: (Buffer | undefined | Error)[] = [];
    const { port, connections } = await serve((outcome) => outcomes.push(outcome));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await post(port, "x".repeat(17), agent)).toBe("too large");
      expect(await post(port, "hello", agent)).toBe("read hello");
    } finally {
      agent.destroy();
    }
    expect(outcomes.map((o) => (o instanceof Buffer ? o.toString("utf8") : o))).toEqual([undefined, "hello"]);
    // Both on the one connection: the refused body was drained, not left to break it.
    expect(connections()).toBe(1);
  });

  it("refuses at once a request whose body was already read", async () => {
    let settled: (error: Error) => void = () => {};
    const refusal = new Promise<Error>((resolve) => {
      settled = resolve;
    });
    const server = createServer((req, res) => {
      req.resume();
      req.once("end", () => {
        readBodyUpTo(req, 16).then(() => settled(new Error("read a body already read")), settled);
        res.end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent();
    try {
      await post(port, "abc", agent);
    } finally {
      agent.destroy();
    }
    expect((await refusal).message).toContain("has ended");
  });

  it("rejects when the client goes away before the body's end", async () => {
    let settled: (outcome: Buffer | undefined | Error) => void = () => {};
    const outcome = new Promise<Buffer | undefined | Error>((resolve) => {
      settled = resolve;
    });
    const { port } = await serve((seen) => settled(seen));
    const socket = connect(port, "127.0.0.1", () => {
      socket.write("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\nabc", () => socket.destroy());
    });
    const seen = await outcome;
    expect(seen).toBeInstanceOf(Error);
  });
});
