import type { ServerResponse } from "node:http";

/** An HTTP answer with a JSON body, as the embedded servers (HTTP API, simulated partner) send them. */
export interface JsonAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export function sendJson(res: ServerResponse, answer: JsonAnswer): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    ...answer.headers,
  });
  res.end(body);
}
