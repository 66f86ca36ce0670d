/**
 * `GET /api/orders/{orderId}/events`: server-sent events. The first event carries the order as it
 * stands (every status already received), then one follows each new status, each `event: status` with
 * the order as its data. A comment line every HEARTBEAT_MS keeps proxies and load balancers from closing
 * a quiet stream.
 */
import type { ServerResponse } from "node:http";
import type { Clock } from "../src/ports/clock.js";
import type { LiveOrders } from "./live-orders.js";
import type { OrderView } from "./order-book.js";

export const HEARTBEAT_MS = 15_000;
/** How long a browser waits before reconnecting a dropped stream. */
const RETRY_MS = 2_000;

export interface EventStreams {
  /** Opens a stream on `res` for `order`, until the client goes away or `closeAll`. */
  open(res: ServerResponse, order: OrderView): void;
  /** Ends every open stream (on shutdown). */
  closeAll(): void;
}

export function createEventStreams(live: LiveOrders, clock: Clock): EventStreams {
  const open = new Set<ServerResponse>();
  return {
    open: (res, order) => {
      res.writeHead(200, {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-store",
        Connection: "keep-alive",
        // Tells a buffering proxy (nginx, App Service's front end) to pass each event on at once.
        "X-Accel-Buffering": "no",
      });
      res.write(`retry: ${RETRY_MS}\n\n`);
      const send = (current: OrderView) => {
        res.write(`event: status\nid: ${current.statuses.length}\ndata: ${JSON.stringify(current)}\n\n`);
      };
      const unwatch = live.watch(order.orderId, send);
      send(order);
      const stopped = new AbortController();
      void heartbeat(res, clock, stopped.signal);
      open.add(res);
      res.once("close", () => {
        unwatch();
        stopped.abort();
        open.delete(res);
      });
    },
    closeAll: () => {
      for (const res of open) res.end();
    },
  };
}

async function heartbeat(res: ServerResponse, clock: Clock, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      await clock.sleep(HEARTBEAT_MS, signal);
    } catch {
      return;
    }
    if (!res.writableEnded) res.write(": heartbeat\n\n");
  }
}
