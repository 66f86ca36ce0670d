import { Agent, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/** One order to post: its id and the exact body sent every time it is (re)tried. */
export interface OutgoingOrder {
  readonly orderId: string;
  readonly body: string;
}

export interface SenderOptions {
  /** How many orders to send: order i is `orderAt(i)`, made when it is first sent. */
  readonly count: number;
  readonly orderAt: (index: number) => OutgoingOrder;
  /** Orders per second: order i is first sent at start + i / rate, whatever became of the others. */
  readonly rate: number;
  /** Where the host is now, or null while it is down. */
  readonly target: () => string | null;
  /** How long an order waits before it is sent again after no answer, a 429 or a 503. */
  readonly retryMs?: number;
  /** Requests in flight at once, at most. */
  readonly maxInFlight?: number;
  /** Told of each order answered 202, with the epoch milliseconds of its first send. */
  readonly onAccepted?: (orderId: string, firstSentAt: number) => void;
}

export interface SenderReport {
  /** Orders answered 202: queued durably by the host. */
  readonly accepted: readonly string[];
  /** Orders answered 4xx other than 429, with the answer: a valid order refused is a failure of the run. */
  readonly refused: ReadonlyMap<string, string>;
  /** Sends that got no answer (the host was down or killed mid-request), 429 or 5xx, later sent again. */
  readonly retries: number;
}

export interface OrderSender {
  /** Orders not yet answered 202 or refused. */
  outstanding(): number;
  /** Orders answered 202 so far. */
  accepted(): number;
  /** Resolves when every order is answered 202 or refused. */
  readonly done: Promise<SenderReport>;
  /** Stops sending; `done` then resolves with what was answered so far. */
  stop(): void;
}

/**
 * An open-loop client: sends on a fixed schedule without waiting for answers, and sends an order
 * again until the host answers it, because a host killed mid-request may or may not have queued it.
 * The host drops a repeated order as a duplicate, so a resend is always safe.
 */
export function startSender(options: SenderOptions): OrderSender {
  const retryMs = options.retryMs ?? 500;
  const maxInFlight = options.maxInFlight ?? 64;
  const agent = new Agent({ keepAlive: true, maxSockets: maxInFlight });
  const accepted: string[] = [];
  const refused = new Map<string, string>();
  const due: Array<{ order: OutgoingOrder; firstSentAt: number; at: number }> = [];
  let retries = 0;
  let inFlight = 0;
  let next = 0;
  let stopped = false;
  const t0 = performance.now();
  const outstanding = () => options.count - accepted.length - refused.size;

  const send = (order: OutgoingOrder, firstSentAt: number, url: string) => {
    inFlight++;
    post(agent, url, order.body).then((answer) => {
      inFlight--;
      if (answer.status === 202) {
        accepted.push(order.orderId);
        options.onAccepted?.(order.orderId, firstSentAt);
      } else if (answer.status >= 400 && answer.status < 500 && answer.status !== 429)
        refused.set(order.orderId, `${answer.status} ${answer.text.slice(0, 300)}`);
      else {
        retries++;
        due.push({ order, firstSentAt, at: performance.now() + retryMs });
      }
    });
  };

  const loop = async (): Promise<SenderReport> => {
    while (!stopped && outstanding() > 0) {
      const now = performance.now();
      const url = options.target();
      while (url !== null && inFlight < maxInFlight) {
        const retry = due[0] !== undefined && due[0].at <= now ? due.shift() : undefined;
        if (retry) {
          send(retry.order, retry.firstSentAt, url);
          continue;
        }
        if (next >= options.count || t0 + (next * 1_000) / options.rate > now) break;
        send(options.orderAt(next++), Date.now(), url);
      }
      await sleep(5);
    }
    agent.destroy();
    return { accepted, refused, retries };
  };
  return {
    outstanding,
    accepted: () => accepted.length,
    done: loop(),
    stop: () => {
      stopped = true;
    },
  };
}

/** POSTs an order; an error or a timeout answers status 0, so the caller retries. Never throws. */
function post(agent: Agent, url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = request(`${url}/api/orders`, {
      method: "POST",
      agent,
      timeout: 10_000,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    req.once("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.once("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.once("error", (error) => resolve({ status: 0, text: error.message }));
    });
    req.once("timeout", () => req.destroy(new Error("no answer within 10 s")));
    req.once("error", (error) => resolve({ status: 0, text: error.message }));
    req.end(body);
  });
}
