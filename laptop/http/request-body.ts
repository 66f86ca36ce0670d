import type { IncomingMessage } from "node:http";

/** The whole request body; undefined when it runs past `maxBytes` (the rest is read and dropped). */
export function readBodyUpTo(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
