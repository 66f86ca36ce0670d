import { Agent, request } from "node:http";
import { isTerminal, type StateRecord } from "../../../src/domain/state-record.js";

/** A soak fails when resident memory grows more than this share past its reading at the end of the warm-up. */
export const RSS_GROWTH_LIMIT = 0.1;

export interface RssReading {
  readonly atSeconds: number;
  readonly bytes: number;
}

export interface RssJudgement {
  /** False when the run was not longer than its warm-up: the readings are reported, not judged. */
  readonly judged: boolean;
  readonly ok: boolean;
  readonly baselineMb: number | null;
  readonly peakAfterBaselineMb: number | null;
  /** Peak after the baseline over the baseline, minus 1. */
  readonly growth: number | null;
}

/** The baseline is the first reading at or after the warm-up; the peak is the largest one after it. */
export function judgeRss(readings: readonly RssReading[], warmupSeconds: number): RssJudgement {
  const index = readings.findIndex((r) => r.atSeconds >= warmupSeconds);
  const baseline = index >= 0 ? readings[index] : undefined;
  const after = readings.slice(index + 1);
  if (baseline === undefined || after.length === 0 || baseline.bytes === 0)
    return { judged: false, ok: true, baselineMb: null, peakAfterBaselineMb: null, growth: null };
  const peak = Math.max(...after.map((r) => r.bytes));
  const growth = peak / baseline.bytes - 1;
  return {
    judged: true,
    ok: growth <= RSS_GROWTH_LIMIT,
    baselineMb: mb(baseline.bytes),
    peakAfterBaselineMb: mb(peak),
    growth: Math.round(growth * 1_000) / 1_000,
  };
}

export function mb(bytes: number): number {
  return Math.round(bytes / 1_048_576);
}

/** When a record reached the terminal state it is in: its history's entry, or its last change. */
export function terminalAt(
  record: Pick<StateRecord, "processState" | "history" | "updatedAt">,
): number | null {
  if (!isTerminal(record.processState)) return null;
  const entry = record.history.findLast((e) => e.to === record.processState);
  return Date.parse(entry?.at ?? record.updatedAt);
}

/**
 * Follows accepted orders through the host's API until each is terminal, and collects the time from
 * its first POST to that moment. Asks about at most `batch` orders per poll, oldest first.
 */
export class LatencyTracker {
  private readonly open = new Map<string, number>();
  private finished: number[] = [];
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });

  constructor(private readonly batch = 400) {}

  track(orderId: string, firstSentAt: number): void {
    this.open.set(orderId, firstSentAt);
  }

  unfinished(): number {
    return this.open.size;
  }

  /** Latencies (ms) of the orders found terminal since the last call. */
  take(): number[] {
    const taken = this.finished;
    this.finished = [];
    return taken;
  }

  async poll(url: string): Promise<void> {
    const due = [...this.open].filter(([, sentAt]) => Date.now() - sentAt >= 200).slice(0, this.batch);
    for (let from = 0; from < due.length; from += 16) {
      await Promise.all(
        due.slice(from, from + 16).map(async ([orderId, sentAt]) => {
          const record = await getRecord(this.agent, `${url}/api/orders/${encodeURIComponent(orderId)}`);
          const at = record ? terminalAt(record) : null;
          if (at === null) return;
          this.open.delete(orderId);
          this.finished.push(Math.max(0, at - sentAt));
        }),
      );
    }
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The record, or null on any failure (the next poll asks again). */
function getRecord(agent: Agent, url: string): Promise<StateRecord | null> {
  return new Promise((resolve) => {
    const req = request(url, { agent, timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.once("end", () => {
        if (res.statusCode !== 200) return resolve(null);
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as StateRecord);
        } catch {
          resolve(null);
        }
      });
      res.once("error", () => resolve(null));
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(null));
    req.end();
  });
}
