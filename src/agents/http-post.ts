import { Agent, type Dispatcher } from "undici";
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

/**
 * undici rather than `node:http` or `fetch`: the Agent makes one small call per step and retry, and
 * measured per call (client and server together) `node:http` cost about twice as much CPU, `fetch`
 * more again in streams and request objects. It never retries a POST by itself. Its own timeouts (10 s
 * to connect, 300 s for an answer) are off: the time a call is allowed is the caller's, on its clock,
 * and may be longer.
 */
const dispatcher = new Agent({
  keepAliveTimeout: IDLE_CONNECTION_MS,
  keepAliveMaxTimeout: IDLE_CONNECTION_MS,
  headersTimeout: 0,
  bodyTimeout: 0,
  connect: { timeout: 0 },
});

/** Longest answer read; a partner's answers are a few hundred bytes. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * POSTs a JSON body and reads the whole answer as text. The time allowed runs on the injected clock,
 * so tests on virtual time control it too. Dispatched with a handler of our own rather than through a
 * response stream: for a few hundred bytes the stream and its events were a sixth of the call.
 */
export function postJson(
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: string,
  options: { readonly clock: Clock; readonly timeoutMs: number },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const call = new AnswerReader(resolve, reject);
    dispatcher.dispatch(
      {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body,
      },
      call,
    );
    // The sleep is left to run out rather than cancelled: cancelling costs more than an idle timer.
    void options.clock.sleep(options.timeoutMs).then(() => call.timeOut(options.timeoutMs));
  });
}

/** One call's answer, gathered as it arrives; settles once, and drops the connection when abandoned. */
class AnswerReader implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private abandoned: Error | undefined;
  private status = 0;
  private size = 0;
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly resolve: (answer: HttpAnswer) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  /**
   * Gives up on a call that has not settled: rejects with a timeout and aborts the request. The error
   * is made only then: most calls settled long before, and an error's stack costs to capture.
   */
  timeOut(timeoutMs: number): void {
    if (this.settled) return;
    const reason = new HttpTimeoutError(timeoutMs);
    const controller = this.controller;
    this.fail(reason);
    this.abandoned = reason;
    controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abandoned) controller.abort(this.abandoned);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= MAX_ANSWER_BYTES) {
      this.chunks.push(chunk);
      return;
    }
    const tooLarge = new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    this.fail(tooLarge);
    controller.abort(tooLarge);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve({ status: this.status, body: Buffer.concat(this.chunks).toString("utf8") });
    this.release();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // Once the answer began, the connection dropped under it: say so rather than the socket's words.
    this.fail(this.status === 0 ? error : new Error("the answer was cut off", { cause: error }));
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(error);
    this.release();
  }

  /** Lets go of the answer and the request: the timeout's pending sleep keeps this reader until it runs out. */
  private release(): void {
    this.chunks.length = 0;
    this.controller = undefined;
  }
}
