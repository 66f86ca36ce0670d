import { createServer, type Server } from "node:net";

/**
 * A distinct TCP port on 127.0.0.1 for each name, each free a moment ago, for a child process that
 * takes its ports as settings. Every listener stays open until all are drawn: closed one by one, the
 * system may hand the same port out twice (about once in 450 draws of six on Linux). Another process
 * may still take one before the child binds it; only a child that binds port 0 itself avoids that.
 */
export async function freePorts<Name extends string>(names: readonly Name[]): Promise<Record<Name, number>> {
  const servers = new Map<Name, Server>();
  try {
    for (const name of names) servers.set(name, await listening());
    const ports = {} as Record<Name, number>;
    for (const [name, server] of servers) ports[name] = portOf(server);
    return ports;
  } finally {
    await Promise.all(
      [...servers.values()].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    );
  }
}

function portOf(server: Server): number {
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("a listener without a port");
  return address.port;
}

function listening(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}
