/**
 * What the public storefront lets anyone take: orders per minute, per visitor and in all, and open event
 * streams, per visitor and in all. Each order is a whole run of the pipeline (database writes and four
 * partner calls), and the storefront puts it straight on the orders queue, past the orders API's
 * `MAX_PENDING`; each stream holds a connection and a timer. A refusal says why, and when to try again.
 */
import type { Clock } from "../src/ports/clock.js";
import type { Answer } from "./http-io.js";
import type { Visitor } from "./visitor.js";

export interface StorefrontLimits {
  /** Orders the storefront takes in a minute, from everyone together. */
  readonly ordersPerMinute: number;
  /** Orders one visitor may place in a minute. */
  readonly visitorOrdersPerMinute: number;
  /** Event streams open at once, in all. */
  readonly streams: number;
  /** Event streams one visitor may hold open at once. */
  readonly visitorStreams: number;
}

export const DEFAULT_LIMITS: StorefrontLimits = {
  ordersPerMinute: 300,
  visitorOrdersPerMinute: 20,
  streams: 500,
  visitorStreams: 20,
};

/**
 * The limits given, each missing one from DEFAULT_LIMITS; a missing visitor's limit is at most the
 * total given, so that lowering a total alone is enough.
 */
export function resolveLimits(given: Partial<StorefrontLimits>): StorefrontLimits {
  const ordersPerMinute = given.ordersPerMinute ?? DEFAULT_LIMITS.ordersPerMinute;
  const streams = given.streams ?? DEFAULT_LIMITS.streams;
  const atMost = (fallback: number, total: number) => Math.min(fallback, Math.max(1, total));
  return {
    ordersPerMinute,
    visitorOrdersPerMinute:
      given.visitorOrdersPerMinute ?? atMost(DEFAULT_LIMITS.visitorOrdersPerMinute, ordersPerMinute),
    streams,
    visitorStreams: given.visitorStreams ?? atMost(DEFAULT_LIMITS.visitorStreams, streams),
  };
}

export const LIMIT_RANGES: Readonly<Record<keyof StorefrontLimits, readonly [number, number]>> = {
  ordersPerMinute: [1, 100_000],
  visitorOrdersPerMinute: [1, 100_000],
  streams: [1, 100_000],
  visitorStreams: [1, 100_000],
};

/** When a browser refused a stream looks again. */
export const STREAM_RETRY_AFTER_S = 15;

/**
 * Each limit that is out of its range or larger than the total it is part of, named by `nameOf` (a
 * setting's name or an option's).
 */
export function limitProblems(
  limits: StorefrontLimits,
  nameOf: (limit: keyof StorefrontLimits) => string,
): string[] {
  const problems: string[] = [];
  for (const [limit, [min, max]] of Object.entries(LIMIT_RANGES) as [
    keyof StorefrontLimits,
    [number, number],
  ][]) {
    const value = limits[limit];
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(
        `${nameOf(limit)} must be an integer from ${min} to ${max.toLocaleString("en-US")}; got ${value}`,
      );
    }
  }
  for (const [part, whole] of [
    ["visitorOrdersPerMinute", "ordersPerMinute"],
    ["visitorStreams", "streams"],
  ] as const) {
    if (limits[part] > limits[whole]) {
      problems.push(`${nameOf(part)} (${limits[part]}) must not exceed ${nameOf(whole)} (${limits[whole]})`);
    }
  }
  return problems;
}

/** An answer refusing a request for a limit, with the limit's `reason` code. */
export interface Refusal extends Answer {
  readonly reason: string;
}

/** A 429 or 503 with `Retry-After` and a body that says why, in words and as a `reason` code. */
export function refusal(
  status: 429 | 503,
  reason: string,
  error: string,
  limit: number,
  retryAfterSeconds: number,
): Refusal {
  return {
    reason,
    status,
    headers: { "Retry-After": String(retryAfterSeconds) },
    body: { error, reason, limit, retryAfterSeconds },
  };
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets, one a minute's worth deep: a visitor may place its minute's orders at once, then one
 * each 60 / limit seconds. A visitor's bucket is kept only once it has taken a token, and dropped once
 * it has filled again, so the map holds at most about a minute's worth of the storefront's orders.
 */
export class OrderAdmission {
  private readonly visitors = new Map<string, Bucket>();
  private readonly overall: Bucket;
  private nextPruneAt = 0;

  constructor(
    private readonly limits: StorefrontLimits,
    private readonly clock: Clock,
  ) {
    this.overall = { tokens: limits.ordersPerMinute, at: clock.now().getTime() };
  }

  /** Takes one order's token for `visitor`, or answers why not (429). */
  admit(visitor: Visitor): Refusal | null {
    const now = this.clock.now().getTime();
    const { ordersPerMinute, visitorOrdersPerMinute } = this.limits;
    const mine = visitor.local ? undefined : this.bucketOf(visitor.key, now);
    if (mine && mine.tokens < 1) {
      const wait = secondsUntilToken(mine, visitorOrdersPerMinute);
      const error = `too many orders from your address: at most ${visitorOrdersPerMinute} a minute; try again in ${wait} s`;
      return refusal(429, "visitorOrderLimit", error, visitorOrdersPerMinute, wait);
    }
    refill(this.overall, now, ordersPerMinute);
    if (this.overall.tokens < 1) {
      const wait = secondsUntilToken(this.overall, ordersPerMinute);
      const error = `the shop is taking as many orders as it can (${ordersPerMinute} a minute); try again in ${wait} s`;
      return refusal(429, "orderLimit", error, ordersPerMinute, wait);
    }
    this.overall.tokens -= 1;
    if (mine) {
      mine.tokens -= 1;
      this.visitors.set(visitor.key, mine);
    }
    this.prune(now);
    return null;
  }

  private bucketOf(key: string, now: number): Bucket {
    const bucket = this.visitors.get(key) ?? { tokens: this.limits.visitorOrdersPerMinute, at: now };
    refill(bucket, now, this.limits.visitorOrdersPerMinute);
    return bucket;
  }

  /** A bucket untouched for a minute is full again, the same as none. */
  private prune(now: number): void {
    if (now < this.nextPruneAt) return;
    for (const [key, bucket] of this.visitors) if (bucket.at <= now - 60_000) this.visitors.delete(key);
    this.nextPruneAt = now + 60_000;
  }
}

function refill(bucket: Bucket, now: number, perMinute: number): void {
  bucket.tokens = Math.min(perMinute, bucket.tokens + (Math.max(0, now - bucket.at) * perMinute) / 60_000);
  bucket.at = now;
}

function secondsUntilToken(bucket: Bucket, perMinute: number): number {
  return Math.max(1, Math.ceil(((1 - bucket.tokens) * 60) / perMinute));
}
