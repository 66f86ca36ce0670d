import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom } from "../../../src/domain/backoff.js";
import { demoOrder } from "../../embedded/demo.js";
import { type Distribution, distribution } from "../distribution.js";
import type { Cast } from "./cast.js";
import { outcomesOf, outgoing, settle } from "./chaos.js";
import { startSender } from "./order-sender.js";
import { RunStage } from "./run-stage.js";
import { judgeRss, LatencyTracker, mb, type RssJudgement, type RssReading } from "./soak-measures.js";
import type { SoakOptions } from "./soak-options.js";

export interface SoakInterval {
  readonly endSeconds: number;
  readonly accepted: number;
  /** Orders found terminal during the interval, and how many per second. */
  readonly finished: number;
  readonly perSecond: number;
  /** From an order's first POST to its terminal state, for the orders finished in the interval. */
  readonly latencyMs: Distribution;
  /** Accepted orders not terminal yet. */
  readonly unfinished: number;
  readonly rssMb: number;
}

export interface SoakSummary {
  readonly ok: boolean;
  readonly minutes: number;
  readonly rate: number;
  readonly agent: "activity" | "queue";
  readonly seed: number;
  readonly accepted: number;
  readonly intervals: readonly SoakInterval[];
  readonly rss: RssJudgement;
  readonly outcomes: Readonly<Record<string, number>>;
  readonly partner: { readonly calls: number; readonly effects: number; readonly duplicateEffects: number };
  readonly violations: readonly string[];
  readonly seconds: number;
  readonly data: string | null;
}

export async function runSoak(options: SoakOptions, progress?: (line: string) => void): Promise<SoakSummary> {
  const stage = new RunStage(options, "soak");
  const started = performance.now();
  let ok = false;
  try {
    await stage.start();
    const { intervals, readings, accepted } = await soakLoad(options, stage.cast, progress);
    const { stored, violations } = await stage.finish(accepted);
    const rss = judgeRss(readings, options.warmupMinutes * 60);
    if (!rss.ok) violations.unshift(`RSS grew ${Math.round((rss.growth ?? 0) * 100)}% after the warm-up`);
    ok = violations.length === 0;
    const { calls, effects, duplicateEffects } = stored.ledger;
    return {
      ok,
      minutes: options.minutes,
      rate: options.rate,
      agent: options.agent,
      seed: options.seed,
      accepted: accepted.length,
      intervals,
      rss,
      outcomes: outcomesOf(stored.records.values()),
      partner: { calls, effects, duplicateEffects },
      violations,
      seconds: Math.round((performance.now() - started) / 1_000),
      data: stage.kept(ok),
    };
  } finally {
    await stage.cleanUp(ok, progress);
  }
}

/** Sends for `minutes`, reporting each interval, then lets the last orders settle. */
async function soakLoad(options: SoakOptions, cast: Cast, progress?: (line: string) => void) {
  const random = seededRandom(options.seed);
  const prefix = `soak-${options.seed}-${Date.now().toString(36)}`;
  const tracker = new LatencyTracker();
  const sender = startSender({
    count: options.rate * options.minutes * 60,
    orderAt: (i) => outgoing(demoOrder(prefix, i, random)),
    rate: options.rate,
    target: () => cast.host?.url ?? null,
    onAccepted: (orderId, sentAt) => tracker.track(orderId, sentAt),
  });
  const t0 = performance.now();
  const intervals: SoakInterval[] = [];
  const readings: RssReading[] = [];
  let sending = true;
  const done = sender.done.finally(() => {
    sending = false;
  });
  let lastReport = 0;
  while (sending) {
    await sleep(1_000);
    if (cast.host) await tracker.poll(cast.host.url);
    const elapsed = (performance.now() - t0) / 1_000;
    if (elapsed < lastReport + options.intervalSeconds && sending) continue;
    const bytes = cast.host?.rss() ?? 0;
    const interval = measure(elapsed, elapsed - lastReport, sender.accepted(), tracker, bytes);
    intervals.push(interval);
    readings.push({ atSeconds: elapsed, bytes });
    progress?.(JSON.stringify(interval));
    lastReport = elapsed;
  }
  const report = await done;
  if (cast.host) await settle(cast.host.url, report.accepted.length, options.drainSeconds, progress);
  tracker.close();
  return { intervals, readings, accepted: report.accepted };
}

function measure(
  elapsed: number,
  seconds: number,
  accepted: number,
  tracker: LatencyTracker,
  rssBytes: number,
): SoakInterval {
  const latencies = tracker.take();
  return {
    endSeconds: Math.round(elapsed),
    accepted,
    finished: latencies.length,
    perSecond: Math.round((latencies.length / Math.max(1, seconds)) * 10) / 10,
    latencyMs: distribution(latencies.map(Math.round)),
    unfinished: tracker.unfinished(),
    rssMb: mb(rssBytes),
  };
}
