/**
 * A counting HTTP proxy in front of Azurite: one listener for each of its blob, queue and table
 * services, each forwarding every request to the service behind it unchanged and counting it once
 * the answer has started, by service and by operation. A host pointed at the proxy's endpoints is
 * billed here as the Azure Storage account would bill it: one transaction per request the service
 * served, whatever its answer (Azure bills failed requests too, throttling and server errors aside).
 * The bench's own reads go to Azurite directly, so they are never counted.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const STORAGE_SERVICES = ["blob", "queue", "table"] as const;
export type StorageService = (typeof STORAGE_SERVICES)[number];

export interface StorageCounts {
  /** Requests served, by service. */
  readonly byService: Readonly<Record<StorageService, number>>;
  /** Requests served, by `<service> <operation>` (see `operationOf`). */
  readonly byOperation: Readonly<Record<string, number>>;
  readonly total: number;
}

export interface CountingStorage {
  /** The proxy's port for each service; clients use these in place of Azurite's. */
  readonly ports: Readonly<Record<StorageService, number>>;
  counts(): StorageCounts;
  stop(): Promise<void>;
}

/**
 * What a request does, in the words of the storage REST API, from its method and path: enough to see
 * where the transactions go (queue polling, message puts and deletes, table batches, blob leases).
 */
export function operationOf(service: StorageService, method: string, url: string): string {
  const parsed = new URL(url, "http://proxy");
  const comp = parsed.searchParams.get("comp");
  const segments = parsed.pathname.split("/").filter((s) => s !== "").length;
  if (service === "queue") {
    if (parsed.pathname.endsWith("/messages") || parsed.pathname.includes("/messages/"))
      return `${method} messages${parsed.searchParams.get("peekonly") === "true" ? " (peek)" : ""}`;
    return `${method} ${comp ? `comp=${comp}` : segments <= 1 ? "account" : "queue"}`;
  }
  if (service === "table") {
    if (parsed.pathname.endsWith("/$batch")) return `${method} batch`;
    return `${method} ${parsed.pathname.includes("Tables") ? "tables" : "entities"}`;
  }
  const lease = method === "PUT" && comp === "lease";
  return `${method} ${lease ? "lease" : comp ? `comp=${comp}` : segments <= 2 ? "container" : "blob"}`;
}

/** Starts the proxy on free loopback ports, forwarding each service to `target`'s port on 127.0.0.1. */
export async function startCountingStorage(
  target: Readonly<Record<StorageService, number>>,
): Promise<CountingStorage> {
  const byOperation = new Map<string, number>();
  const byService: Record<StorageService, number> = { blob: 0, queue: 0, table: 0 };
  const servers: Server[] = [];
  const ports = {} as Record<StorageService, number>;
  for (const service of STORAGE_SERVICES) {
    const count = (req: IncomingMessage) => {
      const kind = `${service} ${operationOf(service, req.method ?? "GET", req.url ?? "/")}`;
      byOperation.set(kind, (byOperation.get(kind) ?? 0) + 1);
      byService[service] += 1;
    };
    const server = createServer((req, res) => forward(target[service], req, res, count));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    servers.push(server);
    ports[service] = (server.address() as AddressInfo).port;
  }
  return {
    ports,
    counts: () => ({
      byService: { ...byService },
      byOperation: Object.fromEntries(byOperation),
      total: byService.blob + byService.queue + byService.table,
    }),
    stop: () => Promise.all(servers.map(close)).then(() => {}),
  };
}

function forward(
  port: number,
  req: IncomingMessage,
  res: ServerResponse,
  count: (req: IncomingMessage) => void,
): void {
  const upstream = request(
    { host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      count(req);
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    },
  );
  upstream.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`storage proxy: ${error.message}`);
  });
  req.pipe(upstream);
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Clients keep connections alive; without this, close waits for them to time out.
    server.closeAllConnections();
  });
}
