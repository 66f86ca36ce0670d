import { createServer, type Server } from "node:net";

/**
 * `count` distinct TCP ports on 127.0.0.1 that were free a moment ago, for a child process that takes
 * its ports as settings. Every listener stays open until all are drawn: closed one by one, the system
 * may hand the same port out twice (about once in 450 draws of six on Linux). Another process may
 * still take one before the child binds it; only a child that binds port 0 itself avoids that.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listening());
    return servers.map((server) => {
      const address = server.address();
      if (typeof address !== "object" || address === null) throw new Error("a listener without a port");
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

function listening(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}
