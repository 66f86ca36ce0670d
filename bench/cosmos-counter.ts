/**
 * The Cosmos DB stand-in (`@vercel/cosmosdb-server`, in memory) started by the bench itself, counting
 * every request it answers (bench/cosmos-requests.ts). `sas host` uses a Cosmos DB that already
 * answers where its settings point, so any build's host talks to this one and is counted the same way.
 * Requests from a client whose user agent carries UNCOUNTED (the bench's own look at the records) are
 * answered but not counted.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpsServer } from "@vercel/cosmosdb-server";
import { type CosmosCounts, CosmosTally, classifyRequest } from "./cosmos-requests.js";

/** Put in `userAgentSuffix` by a client whose requests the counter leaves out. */
export const UNCOUNTED = "sas-bench-uncounted";

export interface CountingCosmos {
  /** `https://127.0.0.1:<port>`; the certificate is self-signed. */
  readonly endpoint: string;
  counts(): CosmosCounts;
  stop(): Promise<void>;
}

export async function startCountingCosmos(): Promise<CountingCosmos> {
  const tally = new CosmosTally();
  const server = createHttpsServer({ keepAlive: true });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (String(req.headers["user-agent"] ?? "").includes(UNCOUNTED)) return;
    observe(req, res, (exchange) => tally.record(exchange));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    counts: () => tally.counts(),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Clients keep connections alive; without this, close waits for them to time out.
        server.closeAllConnections();
      }),
  };
}

/**
 * Reads the request's body beside the stand-in's own handler (both listen from the first chunk, as
 * laptop/stand-ins/cosmos-journal.ts does) and its answer as it is ended.
 */
function observe(
  req: IncomingMessage,
  res: ServerResponse,
  record: (exchange: Parameters<CosmosTally["record"]>[0]) => void,
): void {
  const target = classifyRequest(req.method ?? "GET", req.url ?? "/", req.headers);
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  const end = res.end.bind(res);
  res.end = ((...args: Parameters<typeof end>) => {
    const [body] = args;
    const partitionKey = req.headers["x-ms-documentdb-partitionkey"];
    record({
      target,
      ...(typeof partitionKey === "string" ? { partitionKey } : {}),
      status: res.statusCode,
      requestBody: Buffer.concat(chunks).toString("utf8"),
      responseBody: typeof body === "string" ? body : Buffer.isBuffer(body) ? body.toString("utf8") : "",
    });
    return end(...args);
  }) as typeof res.end;
}
