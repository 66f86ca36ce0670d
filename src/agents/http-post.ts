import http from "node:http";
import https from "node:https";
import type { Clock } from "../ports/clock.js";

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

/** No answer (status and whole body) came within the time allowed; the request was abandoned. */
export class HttpTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = "HttpTimeoutError";
  }
}

/**
 * Connections to the partner are kept open between calls: an Agent makes many small calls to one
 * host. An idle connection is closed after 4 s, before a server's own idle timeout (Node's is 5 s)
 * can close it under a call that is just reusing it.
 */
const IDLE_CONNECTION_MS = 4_000;
const agents = {
  "http:": new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  "https:": new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
};

/** Longest answer read; a partner's answers are a few hundred bytes. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * POSTs a JSON body and reads the whole answer as text. The time allowed runs on the injected clock,
 * so tests on virtual time control it too. Node's own HTTP client rather than `fetch`: the Agent makes
 * one small call per step and retry, and `fetch` costs several times more per call in streams,
 * abort signals and request objects.
 */
export function postJson(
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: string,
  options: { readonly clock: Clock; readonly timeoutMs: number },
): Promise<HttpAnswer> {
  const client = url.protocol === "https:" ? https : http;
  const agent = url.protocol === "https:" ? agents["https:"] : agents["http:"];
  return new Promise((resolve, reject) => {
    let settled = false;
    // Cleared once settled, so the timeout's pending sleep does not hold the request and its answer.
    let pending: http.ClientRequest | undefined;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      pending = undefined;
      outcome();
    };
    const request = client.request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
          else {
            settle(() => reject(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`)));
            response.destroy();
          }
        });
        response.on("end", () =>
          settle(() =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
          ),
        );
        response.on("error", (error) => settle(() => reject(error)));
        // Closed before its end: the partner or the network dropped the connection mid-answer.
        response.on("close", () => settle(() => reject(new Error("the answer was cut off"))));
      },
    );
    request.on("error", (error) => settle(() => reject(error)));
    pending = request;
    // The sleep is left to run out rather than cancelled: cancelling costs more than an idle timer.
    void options.clock.sleep(options.timeoutMs).then(() => {
      const unanswered = pending;
      if (!unanswered) return;
      settle(() => reject(new HttpTimeoutError(options.timeoutMs)));
      unanswered.destroy();
    });
    request.end(body);
  });
}
