import type { IncomingMessage } from "node:http";

/**
 * A request's body, or "tooLarge" as soon as it is known to pass `limit` bytes: from Content-Length
 * before reading anything, or while reading (the request is then paused, not drained). "aborted" when
 * the client goes away first. For the servers built on `node:http` (the storefront, the embedded host).
 */
export function readRequestBody(
  req: IncomingMessage,
  limit: number,
): Promise<Buffer | "tooLarge" | "aborted"> {
  if (Number(req.headers["content-length"] ?? 0) > limit) return Promise.resolve("tooLarge");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off("data", onData);
      req.pause();
      resolve("tooLarge");
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", () => resolve("aborted"));
    req.once("close", () => resolve("aborted"));
  });
}

/**
 * The whole request body; undefined when it runs past `maxBytes` (the rest is read and dropped, so the
 * connection stays usable). Rejects when the client goes away before the body's end, and at once for a
 * request already ended or destroyed, whose body can no longer be read.
 */
export function readBodyUpTo(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  if (req.readableEnded || req.destroyed) {
    return Promise.reject(new Error("the request has ended: its body can no longer be read"));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.once("end", () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks)));
    req.once("error", reject);
    req.once("close", () => {
      if (!req.complete) reject(new Error("the client went away before the whole body came"));
    });
  });
}
