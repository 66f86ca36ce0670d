/** The small HTTP pieces the storefront's server needs: JSON answers, a bounded body, static files. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { readRequestBody } from "../src/adapters/web/request-body.js";
import type { WebFolder } from "../src/adapters/web/web-assets.js";

export interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export function sendJson(res: ServerResponse, answer: Answer): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "Cache-Control": "no-store",
    ...answer.headers,
  });
  res.end(body);
}

export function methodNotAllowed(method: string, ...allowed: string[]): Answer {
  return {
    status: 405,
    body: { error: `method ${method} not allowed here; use ${allowed.join(" or ")}` },
    headers: { Allow: allowed.join(", ") },
  };
}

/** The body as text, or "tooLarge" or "aborted" as `readRequestBody` tells. */
export async function readText(
  req: IncomingMessage,
  limit: number,
): Promise<string | "tooLarge" | "aborted"> {
  const body = await readRequestBody(req, limit);
  return typeof body === "string" ? body : body.toString("utf8");
}

/** The page's files: `/` is its index.html; true when the request was one of them and was answered. */
export async function serveStatic(
  files: WebFolder,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (path.startsWith("/api/")) return false;
  const asset = await files(path === "/" ? undefined : path.slice(1));
  if (!asset) return false;
  res.writeHead(200, {
    "Content-Type": asset.contentType,
    "Content-Length": Buffer.byteLength(asset.body),
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
  });
  res.end(req.method === "HEAD" ? undefined : asset.body);
  return true;
}
