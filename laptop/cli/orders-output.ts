/** What `sas orders` and `sas stats` print of the orders API's answers. */

import type { BreakerOpening } from "../../src/domain/circuit-breaker.js";

/** One line per transition: when, who, what, the state it left and reached, and its step and failure code. */
export function describeHistory(body: Record<string, unknown>): string {
  const earlier = body.earlier as { entries?: number; since?: string; until?: string } | null;
  const entries = (Array.isArray(body.entries) ? body.entries : []) as Record<string, unknown>[];
  const lines = entries.map((e) =>
    [e.at, `#${e.attempt}`, e.actor, e.command, `${e.from} -> ${e.to}`, e.step, e.code]
      .filter((cell) => cell !== null && cell !== undefined)
      .join("  "),
  );
  if (earlier)
    lines.unshift(`(${earlier.entries} earlier transitions, ${earlier.since} to ${earlier.until})`);
  return `${lines.join("\n")}\n`;
}

interface CappedCount {
  readonly count: number;
  readonly capped: boolean;
}

interface StatsBody {
  readonly counts?: Record<string, number>;
  readonly inFlight?: { processing: number; max: number };
  readonly oldestPending?: { orderId: string; since: string; ageMs: number } | null;
  readonly messages?: {
    deadLettered: Record<string, CappedCount>;
    parked: CappedCount;
    countedUpTo: number;
    countedAt: string;
  } | null;
  readonly lastScan?: {
    holder: string;
    finishedAt: string;
    found: Record<string, number | boolean>;
    cost: { requestUnits: number; durationMs: number; pages: number };
  } | null;
  readonly throughput?: { finishedPerMinute: number[]; perSecondLastMinute: number; until: string };
  /** Absent on a host without circuit breakers. */
  readonly breakers?: readonly BreakerLine[] | null;
  readonly unavailable?: string[];
}

/** The fields of a BreakerView (src/domain/breaker-view.ts) that `sas stats` prints. */
interface BreakerLine {
  readonly operation: string;
  readonly status: string;
  readonly openedAt: string | null;
  readonly nextProbeAt: string | null;
  /** Absent from an older host, null for a state stored before openings were kept. */
  readonly opening?: BreakerOpening | null;
}

/** One line per figure, its label in an aligned first column. */
export function describeStats(raw: Record<string, unknown>): string {
  const body = raw as StatsBody;
  const unavailable = (figure: string) =>
    body.unavailable?.includes(figure) ? "unavailable (the host could not read it; see its log)" : undefined;
  const { messages, lastScan, throughput, oldestPending } = body;
  const rows: [string, string][] = [
    [
      "counts",
      Object.entries(body.counts ?? {})
        .map(([state, n]) => `${state} ${n}`)
        .join(" · "),
    ],
    ["in flight", `${body.inFlight?.processing}/${body.inFlight?.max}`],
    [
      "oldest pending",
      oldestPending
        ? `${oldestPending.orderId}, waiting ${durationText(oldestPending.ageMs)} (since ${oldestPending.since})`
        : "none",
    ],
    [
      "dead-lettered",
      unavailable("messages") ??
        Object.entries(messages?.deadLettered ?? {})
          .map(([queue, n]) => `${queue} ${countText(n)}`)
          .join(" · "),
    ],
    ["parked", unavailable("messages") ?? (messages ? countText(messages.parked) : "")],
    ["last scan", unavailable("lastScan") ?? (lastScan ? scanText(lastScan) : "none recorded yet")],
    [
      "finished/min",
      throughput
        ? `${throughput.finishedPerMinute.join(" · ")} (oldest first, to ${throughput.until}; ${throughput.perSecondLastMinute}/s over the last minute)`
        : "",
    ],
  ];
  rows.push(...breakerRows(body, unavailable("breakers")));
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows
    .map(([label, text]) => `${label.padEnd(width)}  ${text}`)
    .join("\n")
    .concat("\n");
}

/**
 * One row per operation whose breaker is not closed (the label on the first only), or one saying they
 * all are; none on a host without breakers.
 */
function breakerRows(body: StatsBody, unavailable: string | undefined): [string, string][] {
  if (body.breakers === undefined) return [];
  if (unavailable !== undefined || body.breakers === null) return [["breakers", unavailable ?? ""]];
  const notClosed = body.breakers.filter((breaker) => breaker.status !== "closed");
  if (notClosed.length === 0) return [["breakers", "all closed"]];
  return notClosed.map((breaker, i) => [i === 0 ? "breakers" : "", breakerText(breaker)]);
}

function breakerText({ operation, status, openedAt, nextProbeAt, opening }: BreakerLine): string {
  const cause = opening ? openingText(opening) : undefined;
  if (status === "open") {
    return `${operation} open since ${openedAt}${cause ? ` (${cause})` : ""}, no call before ${nextProbeAt}`;
  }
  if (status === "half-open") {
    return `${operation} half-open (open since ${openedAt}${cause ? `, ${cause}` : ""}): one probe out, until ${nextProbeAt} at the latest`;
  }
  return `${operation} ${status}`;
}

/** Which failures opened a breaker, in words. */
function openingText(opening: BreakerOpening): string {
  if (opening.cause === "run") return `${opening.consecutiveFailures} transient failures in a row`;
  const seconds = Math.round(opening.windowMs / 1000);
  return `${opening.windowFailures} of ${opening.windowCalls} calls failed transiently in ${seconds} s`;
}

/** A capped count reads "1000+": there may be more. */
function countText(n: CappedCount): string {
  return `${n.count}${n.capped ? "+" : ""}`;
}

function scanText(scan: NonNullable<StatsBody["lastScan"]>): string {
  const { found, cost } = scan;
  const counts = ["scanned", "resets", "toError", "toCompensation", "stalled", "lostRaces"]
    .map((field) => `${field} ${found[field]}`)
    .join(" · ");
  const flags = [found.truncated ? "truncated" : "", found.leaseLost ? "lease lost" : ""].filter(Boolean);
  const spent = `${cost.pages} page(s), ${cost.requestUnits} RU, ${Math.round(cost.durationMs)} ms`;
  return `${scan.finishedAt} by ${scan.holder}: ${[counts, ...flags].join(" · ")}; ${spent}`;
}

/** "3h 5m", "2m 0s", "45s": an age to the second. */
function durationText(ms: number): string {
  const seconds = Math.floor(ms / 1_000);
  const [h, m, s] = [Math.floor(seconds / 3_600), Math.floor((seconds % 3_600) / 60), seconds % 60];
  if (h > 0) return `${h}h ${m}m`;
  return m > 0 ? `${m}m ${s}s` : `${s}s`;
}

/** One aligned line per order, then the continuation to pass for the next page. */
export function describeList(body: Record<string, unknown>): string {
  const items = (Array.isArray(body.items) ? body.items : []) as Record<string, unknown>[];
  const rows = items.map((item) => {
    const lastError = item.lastError as { code?: string } | null | undefined;
    return [String(item.orderId), String(item.processState), String(item.updatedAt), lastError?.code ?? ""];
  });
  const widths = [0, 1, 2].map((column) => Math.max(0, ...rows.map((row) => row[column]?.length ?? 0)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
  if (lines.length === 0) lines.push("no orders");
  if (typeof body.continuation === "string") lines.push(`more: --continuation ${body.continuation}`);
  return `${lines.join("\n")}\n`;
}

export function describeRecord(record: Record<string, unknown>): string {
  const steps = Array.isArray(record.steps)
    ? record.steps.map((s: { name?: string; status?: string }) => `${s.name} ${s.status}`).join(", ")
    : "";
  const lastError = record.lastError as { code?: string; message?: string } | null | undefined;
  const lines = [
    `${record.orderId}  ${record.processState}  attempt ${record.attempt}  failures ${record.failureCount}`,
    `  steps: ${steps}`,
    ...(lastError ? [`  last error: ${lastError.code}: ${lastError.message}`] : []),
  ];
  return `${lines.join("\n")}\n`;
}

export function describeAccepted(body: Record<string, unknown>): string {
  return `${body.command} ${body.orderId}: accepted, now ${body.processState}\n`;
}

export function describeRefusal(status: number, body: Record<string, unknown>): string {
  const issues = Array.isArray(body.issues)
    ? body.issues.map((i: { field?: string; message?: string }) => `${i.field}: ${i.message}`).join("; ")
    : "";
  const detail = body.message ?? issues ?? "";
  return `${status} ${body.error ?? "error"}${detail ? `: ${detail}` : ""}`;
}
