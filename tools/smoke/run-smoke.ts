import { randomCarts } from "./carts.js";
import type { OutageOptions } from "./options.js";
import { messageOf, type OutageReport, RunOutage } from "./outage.js";
import { isFinal, StoreClient } from "./store-client.js";

export interface SmokeRun {
  readonly store: string;
  readonly orders: number;
  readonly timeoutMs: number;
  readonly seed: number;
  readonly concurrency: number;
  /** The pause between two rounds of reading the orders' states (default 1 s). */
  readonly pollIntervalMs?: number;
  /**
   * Take the partner down once a third of the orders are placed (rounded up); the orders then have
   * `timeoutMs` plus the outage to reach a final state.
   */
  readonly outage?: OutageOptions | null;
  /** Told at once what happens mid-run (the outage); default: nowhere. */
  readonly progress?: (line: string) => void;
}

export interface SmokeReport {
  readonly store: string;
  readonly seed: number;
  readonly requested: number;
  /** The ids the storefront gave the orders it accepted, in the order they were placed. */
  readonly placed: readonly string[];
  /** Why each order that was not accepted was not. */
  readonly placementErrors: readonly string[];
  readonly placingSeconds: number;
  /** Each order's final state, by id. */
  readonly finals: Readonly<Record<string, string>>;
  /** The accepted orders without a final state, with the last state read ("unknown" if none). */
  readonly unfinished: readonly { readonly orderId: string; readonly state: string }[];
  /** From the start to the last final state read, or to the end of the run when one is missing. */
  readonly seconds: number;
  /** Why the store could not be used at all (its catalogue unreadable), or the last failed read. */
  readonly problem: string | null;
  /** With `outage`: what it came to; null without. */
  readonly outage: OutageReport | null;
  readonly ok: boolean;
}

/** Ids asked for in one `GET /api/orders?ids=`, so the URL stays short. */
const IDS_PER_READ = 25;

/**
 * Places `orders` orders through the storefront's HTTP API (a seeded random cart each, `concurrency`
 * at a time), then reads their states by polling `GET /api/orders?ids=` until every one is final or
 * the time is up. Polling, rather than each order's event stream, holds no connection open, which
 * proxies in front of a deployed storefront may cut. With `outage`, the partner is taken down once a
 * third of the orders are placed, and read back up once it is due back, before the run ends.
 */
export async function runSmoke(run: SmokeRun): Promise<SmokeReport> {
  const client = new StoreClient(run.store);
  const started = performance.now();
  const deadline = started + run.timeoutMs + (run.outage ? run.outage.seconds * 1000 : 0);
  const base = { store: run.store, seed: run.seed, requested: run.orders };
  const pollIntervalMs = run.pollIntervalMs ?? 1_000;
  const outage = run.outage ? new RunOutage(run.outage, run.progress ?? (() => {})) : undefined;
  let skus: string[];
  try {
    skus = await client.skus();
  } catch (error) {
    return failedBeforePlacing(base, started, `the store could not be used: ${messageOf(error)}`);
  }
  const outageAt = Math.ceil(run.orders / 3);
  const placing = await placeOrders(
    client,
    randomCarts(skus, run.orders, run.seed),
    run.concurrency,
    deadline,
    (attempted, placed) => {
      if (attempted >= outageAt) outage?.start(placed, run.orders);
    },
  );
  const placingSeconds = secondsSince(started);
  // The partner is read back up as soon as it is due, while the orders are followed.
  const [followed] = await Promise.all([
    followOrders(client, placing.placed, deadline, pollIntervalMs),
    outage?.confirmOver(deadline, pollIntervalMs),
  ]);
  const outageReport = outage ? outage.report(followed.finalReadAt) : null;
  const unfinished = placing.placed
    .filter((orderId) => !followed.finals.has(orderId))
    .map((orderId) => ({ orderId, state: followed.lastSeen.get(orderId) ?? "unknown" }));
  return {
    ...base,
    placed: placing.placed,
    placementErrors: placing.errors,
    placingSeconds,
    finals: Object.fromEntries(followed.finals),
    unfinished,
    seconds:
      ((unfinished.length === 0 ? followed.lastFinalAt : undefined) ?? performance.now()) / 1000 -
      started / 1000,
    problem: unfinished.length > 0 ? followed.lastReadError : null,
    outage: outageReport,
    ok:
      placing.errors.length === 0 &&
      unfinished.length === 0 &&
      placing.placed.length === run.orders &&
      (outageReport === null || outageReport.problem === null),
  };
}

function failedBeforePlacing(
  base: Pick<SmokeReport, "store" | "seed" | "requested">,
  started: number,
  problem: string,
): SmokeReport {
  const seconds = secondsSince(started);
  return {
    ...base,
    placed: [],
    placementErrors: [],
    placingSeconds: seconds,
    finals: {},
    unfinished: [],
    seconds,
    problem,
    outage: null,
    ok: false,
  };
}

/**
 * Checkout of each cart, at most `concurrency` at a time; a refused order is not retried (it would be
 * a new one). `attempted` hears the count of checkouts answered and of orders placed after each one.
 */
async function placeOrders(
  client: StoreClient,
  carts: readonly { sku: string; quantity: number }[][],
  concurrency: number,
  deadline: number,
  attempted: (attempts: number, placed: number) => void,
): Promise<{ placed: string[]; errors: string[] }> {
  const ids: (string | undefined)[] = new Array(carts.length);
  const errors: string[] = [];
  let next = 0;
  let attempts = 0;
  let placed = 0;
  const worker = async () => {
    for (let index = next++; index < carts.length; index = next++) {
      if (performance.now() > deadline) {
        errors.push(`order ${index + 1}: not placed before the timeout`);
        continue;
      }
      try {
        ids[index] = await client.placeOrder(carts[index] ?? []);
        placed += 1;
      } catch (error) {
        errors.push(`order ${index + 1}: ${messageOf(error)}`);
      }
      attempted(++attempts, placed);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, carts.length) }, worker));
  return { placed: ids.filter((id): id is string => id !== undefined), errors };
}

interface Followed {
  readonly finals: Map<string, string>;
  /** When each final state was first read (performance clock). */
  readonly finalReadAt: Map<string, number>;
  readonly lastSeen: Map<string, string>;
  readonly lastFinalAt: number | undefined;
  readonly lastReadError: string | null;
}

/** Reads the states of the orders not yet final, round after round, until all are or the deadline passes. */
async function followOrders(
  client: StoreClient,
  orderIds: readonly string[],
  deadline: number,
  pollIntervalMs: number,
): Promise<Followed> {
  const finals = new Map<string, string>();
  const finalReadAt = new Map<string, number>();
  const lastSeen = new Map<string, string>();
  let lastFinalAt: number | undefined;
  let lastReadError: string | null = null;
  for (;;) {
    const open = orderIds.filter((orderId) => !finals.has(orderId));
    for (let at = 0; at < open.length; at += IDS_PER_READ) {
      try {
        for (const order of await client.states(open.slice(at, at + IDS_PER_READ))) {
          lastSeen.set(order.orderId, order.state);
          if (isFinal(order.state) && !finals.has(order.orderId)) {
            finals.set(order.orderId, order.state);
            lastFinalAt = performance.now();
            finalReadAt.set(order.orderId, lastFinalAt);
          }
        }
      } catch (error) {
        // One failed read is retried in the next round; only the timeout ends the run.
        lastReadError = `reading the orders' states: ${messageOf(error)}`;
      }
    }
    const remaining = deadline - performance.now();
    if (finals.size === orderIds.length || remaining <= 0) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollIntervalMs, remaining)));
  }
  return { finals, finalReadAt, lastSeen, lastFinalAt, lastReadError };
}

function secondsSince(started: number): number {
  return (performance.now() - started) / 1000;
}
