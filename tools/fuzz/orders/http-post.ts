import { request } from "node:http";

export interface HttpAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * POSTs `body` to `url`: with a Content-Length, or in chunks without one, as a streaming client
 * sends it. Resolves with the answer as soon as it has come, whether or not the server read the
 * whole body (it may answer 413 part-way); a write that fails after the answer is of no interest.
 */
export function post(
  url: string,
  body: string | Uint8Array,
  options: { readonly chunked: boolean; readonly headers: Readonly<Record<string, string>> },
): Promise<HttpAnswer> {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  const headers: Record<string, string | number> = { "Content-Type": "application/json", ...options.headers };
  if (!options.chunked) headers["Content-Length"] = bytes.byteLength;
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(url, { method: "POST", headers }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        req.destroy();
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
        } catch (error) {
          reject(new Error(`the answer ${res.statusCode} is not JSON: ${String(error)}`));
        }
      });
    });
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    const CHUNK = 16 * 1024;
    for (let at = 0; at < bytes.byteLength; at += options.chunked ? CHUNK : bytes.byteLength) {
      req.write(bytes.subarray(at, options.chunked ? at + CHUNK : undefined));
    }
    req.end();
  });
}
