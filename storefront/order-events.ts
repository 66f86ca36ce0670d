/**
 * `GET /api/orders/{orderId}/events`: server-sent events. The first event carries the order as it
 * stands (every status already received), then one follows each new status, each `event: status` with
 * the order as its data. A comment line every HEARTBEAT_MS keeps proxies and load balancers from closing
 * a quiet stream. Each open stream holds a connection and a timer, so there are at most `streams` of
 * them, and at most `visitorStreams` for one visitor (limits.ts); past either, a refusal says why.
 */
import type { ServerResponse } from "node:http";
import type { Clock } from "../src/ports/clock.js";
import type { Answer } from "./http-io.js";
import { type Refusal, refusal, STREAM_RETRY_AFTER_S, type StorefrontLimits } from "./limits.js";
import type { LiveOrders } from "./live-orders.js";
import type { OrderView } from "./order-book.js";
import type { Visitor } from "./visitor.js";

export const HEARTBEAT_MS = 15_000;
/** How long a browser waits before reconnecting a dropped stream. */
const RETRY_MS = 2_000;

export interface EventStreams {
  /**
   * Opens a stream on `res` for `order`, until the client goes away or `closeAll`; null when it did, the
   * refusal to answer when a limit is reached (503 for all streams, 429 for the visitor's).
   */
  open(res: ServerResponse, order: OrderView, visitor: Visitor): Answer | null;
  /** Ends every open stream (on shutdown). */
  closeAll(): void;
}

type StreamLimits = Pick<StorefrontLimits, "streams" | "visitorStreams">;

export function createEventStreams(live: LiveOrders, clock: Clock, limits: StreamLimits): EventStreams {
  const open = new Set<ServerResponse>();
  const perVisitor = new Map<string, number>();
  return {
    open: (res, order, visitor) => {
      const refused = refusalFor(limits, open.size, visitor.local ? 0 : (perVisitor.get(visitor.key) ?? 0));
      if (refused) return refused;
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
      const key = visitor.local ? undefined : visitor.key;
      if (key !== undefined) perVisitor.set(key, (perVisitor.get(key) ?? 0) + 1);
      res.once("close", () => {
        unwatch();
        stopped.abort();
        open.delete(res);
        if (key === undefined) return;
        const left = (perVisitor.get(key) ?? 1) - 1;
        if (left > 0) perVisitor.set(key, left);
        else perVisitor.delete(key);
      });
      return null;
    },
    closeAll: () => {
      for (const res of open) res.end();
    },
  };
}

function refusalFor(limits: StreamLimits, openInAll: number, openByVisitor: number): Refusal | null {
  if (openInAll >= limits.streams) {
    const error = `the shop is following as many orders live as it can (${limits.streams}); the page looks again in ${STREAM_RETRY_AFTER_S} s`;
    return refusal(503, "streamLimit", error, limits.streams, STREAM_RETRY_AFTER_S);
  }
  if (openByVisitor >= limits.visitorStreams) {
    const error = `your address already follows ${limits.visitorStreams} orders live, the most it may; close one, or the page looks again in ${STREAM_RETRY_AFTER_S} s`;
    return refusal(429, "visitorStreamLimit", error, limits.visitorStreams, STREAM_RETRY_AFTER_S);
  }
  return null;
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
