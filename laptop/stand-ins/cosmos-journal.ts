import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "node:https";
import { request } from "node:https";

/** A write the Cosmos DB stand-in answered with success, as the client sent it. */
interface RecordedWrite {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** Conditions that held when the write was made; the replayed resources have other etags. */
const NOT_REPLAYED = new Set(["if-match", "if-none-match", "host", "content-length", "connection"]);

/**
 * Keeps the in-memory Cosmos DB stand-in's data across restarts: every write it answers with success
 * (creates, upserts, replaces, patches, deletes, batches) is appended to a journal file before the
 * answer goes out, and replayed in order when the stand-in starts again. A process crash loses
 * nothing answered; the file only grows, which suits a laptop's development data.
 */
export function recordWrites(server: Server, file: string): void {
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (!WRITES.has(req.method ?? "") || isQuery(req) || req.headers["x-sas-replay"]) return;
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    const end = res.end.bind(res);
    res.end = ((...args: Parameters<typeof end>) => {
      if (res.statusCode >= 200 && res.statusCode < 300) {
        const write: RecordedWrite = {
          method: req.method ?? "POST",
          path: req.url ?? "/",
          headers: replayable(req),
          body: Buffer.concat(chunks).toString("utf8"),
        };
        appendFileSync(file, `${JSON.stringify(write)}\n`);
      }
      return end(...args);
    }) as typeof res.end;
  });
}

/** Sends every journaled write to the stand-in at `host:port` again, in order; returns how many. */
export async function replayWrites(host: string, port: number, file: string): Promise<number> {
  if (!existsSync(file)) return 0;
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "");
  for (const line of lines) {
    const write = JSON.parse(line) as RecordedWrite;
    await send(host, port, write);
  }
  return lines.length;
}

function isQuery(req: IncomingMessage): boolean {
  return (
    String(req.headers["x-ms-documentdb-isquery"]).toLowerCase() === "true" ||
    String(req.headers["content-type"]).startsWith("application/query+json")
  );
}

function replayable(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_REPLAYED.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function send(host: string, port: number, write: RecordedWrite): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host,
        port,
        method: write.method,
        path: write.path,
        headers: { ...write.headers, "x-sas-replay": "1", "content-length": Buffer.byteLength(write.body) },
        // The stand-in's own self-signed certificate.
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve());
      },
    );
    req.on("error", reject);
    req.end(write.body);
  });
}
