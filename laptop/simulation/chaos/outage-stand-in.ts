import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** Calls the host made to the partner while it was down, by operation: milliseconds since the outage began. */
export interface OutageCalls {
  readonly seconds: number;
  readonly byOperation: Readonly<Record<string, readonly number[]>>;
}

/**
 * What answers on the partner's port while the partner is down: every call refused with a 503 and
 * counted, so a run can tell how often the host still called a partner it had every reason to think
 * was down (its circuit breakers should let one probe per operation through now and then).
 */
export async function startOutageStandIn(port: number): Promise<{ close(): Promise<OutageCalls> }> {
  const began = performance.now();
  const calls: Record<string, number[]> = {};
  const server = createServer((req, res) => {
    const operation = /^\/operations\/([A-Za-z]+)/.exec(req.url ?? "")?.[1] ?? "other";
    const times = calls[operation] ?? [];
    times.push(Math.round(performance.now() - began));
    calls[operation] = times;
    req.resume();
    res.writeHead(503, { "content-type": "application/json" }).end('{"error":"unavailable"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  if (bound !== port)
    throw new Error(`the outage stand-in listens on ${bound}, not the partner's port ${port}`);
  return {
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return { seconds: Math.round((performance.now() - began) / 1_000), byOperation: calls };
    },
  };
}

/** Per operation: all calls, and the most in any `windowMs` after the first `settleMs` (the breaker's opening run). */
export function outageCallSummary(
  outage: OutageCalls,
  windowMs: number,
  settleMs: number,
): Readonly<Record<string, { readonly calls: number; readonly mostPerWindowAfterOpening: number }>> {
  return Object.fromEntries(
    Object.entries(outage.byOperation).map(([operation, times]) => {
      const later = times.filter((t) => t >= settleMs);
      let most = 0;
      for (const [i, t] of later.entries()) {
        const within = later.slice(i).filter((u) => u < t + windowMs).length;
        most = Math.max(most, within);
      }
      return [operation, { calls: times.length, mostPerWindowAfterOpening: most }];
    }),
  );
}
