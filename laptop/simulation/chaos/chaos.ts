import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom } from "../../../src/domain/backoff.js";
import { isTerminal, PROCESS_STATES } from "../../../src/domain/state-record.js";
import { LATEST_WORKFLOW_VERSION } from "../../../src/domain/workflow.js";
import { demoOrder } from "../../embedded/demo.js";
import type { Cast } from "./cast.js";
import type { OutageWindow } from "./chaos-check.js";
import type { StoredEvidence } from "./chaos-evidence.js";
import type { ChaosOptions } from "./chaos-options.js";
import { chaosSchedule, firstThird } from "./chaos-schedule.js";
import { type OrderSender, type OutgoingOrder, type SenderReport, startSender } from "./order-sender.js";
import { type OutageCalls, outageCallSummary, startOutageStandIn } from "./outage-stand-in.js";
import { RunStage } from "./run-stage.js";

export interface KillRecord {
  readonly at: number;
  /**
   * What was going on when the host died: orders still being sent, in Processing, in Compensating;
   * "unknown" when the host did not answer its statistics within 2 s.
   */
  readonly during: readonly ("submission" | "processing" | "compensation" | "unknown")[];
}

export interface ChaosSummary {
  readonly ok: boolean;
  readonly agent: "activity" | "queue";
  readonly seed: number;
  readonly orders: number;
  readonly rate: number;
  readonly accepted: number;
  /** Sends that went unanswered (the host was down) or were answered 429/5xx, then sent again. */
  readonly resends: number;
  readonly kills: readonly KillRecord[];
  /** How many kills struck while orders were being sent, processed, compensated. */
  readonly killsDuring: Readonly<Record<"submission" | "processing" | "compensation", number>>;
  readonly partnerOutages: number;
  readonly outageSeconds: number;
  /** What the host did while the partner was down, and how soon everything finished once it was back. */
  readonly outages?: OutageReport;
  readonly outcomes: Readonly<Record<string, number>>;
  /** The records pinned to each workflow version. */
  readonly workflowVersions: Readonly<Record<string, number>>;
  readonly upgrade: boolean;
  readonly deadLettered: number;
  readonly partner: {
    readonly calls: number;
    readonly effects: number;
    readonly undos: number;
    readonly duplicateEffects: number;
    readonly rejections: number;
    readonly transientFaults: number;
  };
  readonly seconds: number;
  readonly violations: readonly string[];
  /** Where the database, the host's log and the ledger are, when they were kept. */
  readonly data: string | null;
}

export interface OutageReport {
  /**
   * Per outage and partner operation: the calls the host still made, and the most in any probe window
   * (BREAKER_OPEN_MS at its default) once the breaker's opening run was over.
   */
  readonly calls: readonly Readonly<Record<string, { calls: number; mostPerWindowAfterOpening: number }>>[];
  /** From the partner's return after the last outage until every order was final (with the drain's polling). */
  readonly finishedSecondsAfterReturn: number | null;
}

/** The breaker's first open time at its default: once open, at most one probe per operation in it. */
const PROBE_WINDOW_MS = 5_000;
/** Calls under way, and the run of failures that opens a breaker, are over within this. */
const OPENING_MS = 10_000;

export async function runChaos(
  options: ChaosOptions,
  progress?: (line: string) => void,
): Promise<ChaosSummary> {
  const stage = new RunStage(options, "chaos");
  const started = performance.now();
  let ok = false;
  try {
    await stage.start();
    const { report, kills, outageCalls, lastOutageEnd, outageWindows } = await playChaos(
      options,
      stage.cast,
      progress,
    );
    if (stage.cast.host)
      await settle(stage.cast.host.url, report.accepted.length, options.drainSeconds, progress);
    const returned = lastOutageEnd();
    const outageReport: OutageReport = {
      calls: outageCalls.map((calls) => outageCallSummary(calls, PROBE_WINDOW_MS, OPENING_MS)),
      finishedSecondsAfterReturn: returned === null ? null : round((performance.now() - returned) / 1_000),
    };
    const { stored, violations } = await stage.finish(report.accepted, outageWindows);
    violations.unshift(
      ...[...report.refused].map(([orderId, answer]) => `${orderId}: a valid order was refused: ${answer}`),
      ...(options.upgrade ? upgradeViolations(stored.records.values()) : []),
    );
    ok = violations.length === 0;
    return {
      ...summarize(options, report, kills, stored, violations, started, stage.kept(ok)),
      outages: outageReport,
    };
  } finally {
    await stage.cleanUp(ok, progress);
  }
}

/** Sends every order while the kills and the outages strike on their schedule; resolves when all are answered. */
async function playChaos(
  options: ChaosOptions,
  cast: Cast,
  progress?: (line: string) => void,
): Promise<{
  report: SenderReport;
  kills: KillRecord[];
  outageCalls: OutageCalls[];
  lastOutageEnd: () => number | null;
  /** Each outage as wall-clock instants, for the check of orders parked by it. */
  outageWindows: OutageWindow[];
}> {
  const random = seededRandom(options.seed);
  const prefix = `chaos-${options.seed}-${Date.now().toString(36)}`;
  const schedule = chaosSchedule(options, random);
  const sender = startSender({
    count: options.orders,
    orderAt: (i) => outgoing(demoOrder(prefix, i, random)),
    rate: options.rate,
    target: () => cast.host?.url ?? null,
  });
  const t0 = performance.now();
  const at = (seconds: number) => sleep(Math.max(0, t0 + seconds * 1_000 - performance.now()));
  const kills: KillRecord[] = [];
  const killing = (async () => {
    for (const [n, kill] of schedule.kills.entries()) {
      await at(kill.at);
      const during = await momentToKill(cast, sender, aimSeconds(options, n, kill.at));
      await cast.host?.kill();
      cast.host = null;
      kills.push({ at: round((performance.now() - t0) / 1_000), during });
      progress?.(
        `killed the host (${n + 1}/${schedule.kills.length}) during ${during.join(", ") || "nothing: the host was idle"}`,
      );
      await sleep(kill.downSeconds * 1_000);
      await cast.startHost(n + 1);
    }
  })();
  const outageCalls: OutageCalls[] = [];
  const outageWindows: OutageWindow[] = [];
  let lastOutageEnd: number | null = null;
  const outages = (async () => {
    for (const [n, outage] of schedule.outages.entries()) {
      await at(outage);
      const from = Date.now();
      await cast.partner?.kill();
      const standIn = await startOutageStandIn(cast.partnerPortNumber);
      progress?.(`partner down (${n + 1}/${schedule.outages.length}) for ${options.outageSeconds} s`);
      await sleep(options.outageSeconds * 1_000);
      outageCalls.push(await standIn.close());
      await cast.startPartner();
      outageWindows.push({ from, to: Date.now() });
      lastOutageEnd = performance.now();
    }
  })();
  await Promise.all([killing, outages]);
  return { report: await sender.done, kills, outageCalls, lastOutageEnd: () => lastOutageEnd, outageWindows };
}

/** How long a kill aimed at a compensation waits for one to be under way before it strikes anyway. */
const AIM_SECONDS = 10;

/**
 * How long kill `n` may wait for a compensation to strike in: every third waits AIM_SECONDS; an
 * upgrade's (the first) waits until two thirds of the sending at most, so that the new version still
 * accepts orders; the others strike at once.
 */
function aimSeconds(options: ChaosOptions, n: number, killAt: number): number {
  if (options.upgrade && n === 0) return Math.max(0, 2 * firstThird(options.orders / options.rate) - killAt);
  return n % 3 === 2 ? AIM_SECONDS : 0;
}

/**
 * Reads what the host is doing; a kill aimed at a compensation polls for up to `aimSeconds` until an
 * order is Compensating, because compensations are few and short and a kill at a random moment would
 * seldom catch one.
 */
async function momentToKill(
  cast: Cast,
  sender: OrderSender,
  aimSeconds: number,
): Promise<KillRecord["during"]> {
  const deadline = performance.now() + aimSeconds * 1_000;
  for (;;) {
    const during = await activity(cast, sender);
    if (during.includes("compensation") || performance.now() >= deadline) return during;
    await sleep(50);
  }
}

/** What the host was doing just before a kill, from its own statistics (asked with a short timeout). */
async function activity(cast: Cast, sender: OrderSender): Promise<KillRecord["during"]> {
  const during: Array<KillRecord["during"][number]> = sender.outstanding() > 0 ? ["submission"] : [];
  try {
    const answer = await fetch(`${cast.host?.url}/api/stats`, { signal: AbortSignal.timeout(2_000) });
    const stats = (await answer.json()) as { counts?: Record<string, number> };
    if ((stats.counts?.Processing ?? 0) > 0) during.push("processing");
    if ((stats.counts?.Compensating ?? 0) > 0) during.push("compensation");
  } catch {
    during.push("unknown");
  }
  return during;
}

/** Waits until the host has a terminal record for at least every accepted order and nothing in flight. */
export async function settle(
  url: string,
  accepted: number,
  drainSeconds: number,
  progress?: (line: string) => void,
): Promise<void> {
  const deadline = performance.now() + drainSeconds * 1_000;
  let last = "";
  while (performance.now() < deadline) {
    try {
      const answer = await fetch(`${url}/api/stats`, { signal: AbortSignal.timeout(5_000) });
      const counts = ((await answer.json()) as { counts: Record<string, number> }).counts;
      const open = PROCESS_STATES.filter((s) => !isTerminal(s)).reduce((n, s) => n + (counts[s] ?? 0), 0);
      const terminal = PROCESS_STATES.filter(isTerminal).reduce((n, s) => n + (counts[s] ?? 0), 0);
      if (open === 0 && terminal >= accepted) return;
      const line = `settling: ${terminal} of ${accepted} terminal, ${open} in flight`;
      if (line !== last) progress?.(line);
      last = line;
    } catch {
      // busy; ask again
    }
    await sleep(1_000);
  }
  progress?.(`gave up waiting after ${drainSeconds} s; the check reports what is unfinished`);
}

function summarize(
  options: ChaosOptions,
  report: SenderReport,
  kills: readonly KillRecord[],
  stored: StoredEvidence,
  violations: readonly string[],
  started: number,
  data: string | null,
): ChaosSummary {
  const { ledger } = stored;
  return {
    ok: violations.length === 0,
    agent: options.agent,
    seed: options.seed,
    orders: options.orders,
    rate: options.rate,
    accepted: report.accepted.length,
    resends: report.retries,
    kills,
    killsDuring: {
      submission: kills.filter((k) => k.during.includes("submission")).length,
      processing: kills.filter((k) => k.during.includes("processing")).length,
      compensation: kills.filter((k) => k.during.includes("compensation")).length,
    },
    partnerOutages: options.partnerOutages,
    outageSeconds: options.outageSeconds,
    outcomes: outcomesOf(stored.records.values()),
    workflowVersions: workflowVersionsOf(stored.records.values()),
    upgrade: options.upgrade,
    deadLettered: stored.deadLettered.size,
    partner: {
      calls: ledger.calls,
      effects: ledger.effects,
      undos: ledger.undos,
      duplicateEffects: ledger.duplicateEffects,
      rejections: ledger.rejections,
      transientFaults: ledger.transientFaults,
    },
    seconds: round((performance.now() - started) / 1_000),
    violations,
    data,
  };
}

/** How many records ended in each state. */
export function outcomesOf(records: Iterable<{ readonly processState: string }>): Record<string, number> {
  const outcomes = Object.fromEntries(PROCESS_STATES.map((s) => [s, 0])) as Record<string, number>;
  for (const record of records) outcomes[record.processState] = (outcomes[record.processState] ?? 0) + 1;
  return outcomes;
}

/** How many records are pinned to each workflow version. */
function workflowVersionsOf(records: Iterable<{ readonly workflowVersion: number }>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { workflowVersion } of records) counts[workflowVersion] = (counts[workflowVersion] ?? 0) + 1;
  return counts;
}

/**
 * An upgrade run must have run both versions: orders accepted by the first host under version 1, the
 * rest under the default. Each order keeping to its own version's steps is invariant 8.
 */
function upgradeViolations(records: Iterable<{ readonly workflowVersion: number }>): string[] {
  const counts = workflowVersionsOf(records);
  return [1, LATEST_WORKFLOW_VERSION]
    .filter((version) => !counts[version])
    .map((version) => `the upgrade run has no order of workflow version ${version}`);
}

export function outgoing(order: { readonly orderId: string }): OutgoingOrder {
  return { orderId: order.orderId, body: JSON.stringify(order) };
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
