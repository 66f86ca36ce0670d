import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpsServer } from "@vercel/cosmosdb-server";
import type { CosmosConnection } from "../../src/adapters/cosmos/cosmos-client.js";

export interface CosmosTestServer {
  readonly endpoint: string;
  /** A key connection to this server (it accepts any key) with its self-signed certificate allowed. */
  readonly connection: CosmosConnection;
  /** Headers of every request so far, oldest first. */
  readonly requests: readonly IncomingHttpHeaders[];
  stop(): Promise<void>;
}

/**
 * An in-memory Cosmos DB stand-in on a free loopback port. Keep-alive makes it several times faster;
 * its certificate is self-signed (and expired), hence `allowSelfSignedCertificate`.
 */
export async function startCosmosServer(): Promise<CosmosTestServer> {
  const server = createHttpsServer({ keepAlive: true });
  const requests: IncomingHttpHeaders[] = [];
  server.on("request", (req) => void requests.push(req.headers));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `https://127.0.0.1:${port}`;
  return {
    endpoint,
    connection: { endpoint, key: "stand-in-accepts-any-key", allowSelfSignedCertificate: true },
    requests,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Clients keep connections alive; without this, close waits for them to time out.
        server.closeAllConnections();
      }),
  };
}
