import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpsServer } from "@vercel/cosmosdb-server";
import type { CosmosConnection } from "../../src/adapters/cosmos/cosmos-client.js";
import { recordWrites, replayWrites } from "./cosmos-journal.js";

export interface CosmosStandIn {
  readonly endpoint: string;
  /** A key connection to this server (it accepts any key) with its self-signed certificate allowed. */
  readonly connection: CosmosConnection;
  /** Headers of every request so far, oldest first. */
  readonly requests: readonly IncomingHttpHeaders[];
  stop(): Promise<void>;
}

/**
 * An in-memory Cosmos DB stand-in, by default on a free loopback port. Keep-alive makes it several times faster;
 * its certificate is self-signed (and expired), hence `allowSelfSignedCertificate`.
 */
export async function startCosmosServer(
  options: {
    readonly host?: string;
    readonly port?: number;
    /** A journal file of the writes, replayed on start, so the data survives restarts; default none. */
    readonly journal?: string;
  } = {},
): Promise<CosmosStandIn> {
  const server = createHttpsServer({ keepAlive: true });
  if (options.journal) recordWrites(server, options.journal);
  const requests: IncomingHttpHeaders[] = [];
  server.on("request", (req) => void requests.push(req.headers));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  if (options.journal) await replayWrites(options.host ?? "127.0.0.1", port, options.journal);
  const endpoint = `https://${options.host ?? "127.0.0.1"}:${port}`;
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
