import type { SmokeReport } from "./run-smoke.js";
import { FINAL_STATES } from "./store-client.js";

/**
 * The report's lines: what was placed, the count of each final state and the time, the partner's
 * outage (with --outage), then what failed.
 */
export function formatReport(report: SmokeReport): string {
  const lines: string[] = [];
  if (report.placed.length > 0 || report.placementErrors.length > 0) {
    lines.push(
      `smoke: placed ${report.placed.length} of ${report.requested} orders through ${report.store} in ${seconds(report.placingSeconds)} (seed ${report.seed})`,
    );
  }
  const finished = Object.keys(report.finals).length;
  if (report.placed.length > 0) {
    const counts = FINAL_STATES.map(
      (state) => `${state} ${Object.values(report.finals).filter((final) => final === state).length}`,
    ).join(", ");
    const reached =
      report.unfinished.length === 0
        ? `all ${finished} reached a final state in ${seconds(report.seconds)}`
        : `${finished} of ${report.placed.length} reached a final state within ${seconds(report.seconds)}`;
    lines.push(`smoke: ${reached}: ${counts}`);
  }
  const outage = report.outage;
  if (outage?.down) {
    const back =
      outage.backAt === null
        ? "not read back up"
        : `answering again at ${outage.backAt}; ${outage.finishedAfter} orders reached a final state after it was due back`;
    lines.push(
      `smoke: outage: the partner was down for ${outage.seconds} s after ${outage.afterPlaced} of ${report.requested} orders were placed (since ${outage.down.since}, until ${outage.down.until}), ${back}`,
    );
  }
  if (outage?.problem) lines.push(`smoke: ${outage.problem}`);
  if (report.unfinished.length > 0) {
    lines.push(`smoke: ${report.unfinished.length} orders without a final state (order, last state read):`);
    for (const { orderId, state } of report.unfinished) lines.push(`  ${orderId} ${state}`);
  }
  if (report.placementErrors.length > 0) {
    lines.push(`smoke: ${report.placementErrors.length} orders not placed:`);
    for (const error of report.placementErrors) lines.push(`  ${error}`);
  }
  if (report.problem) lines.push(`smoke: ${report.problem}`);
  lines.push(report.ok ? "smoke: passed" : "smoke: FAILED");
  return `${lines.join("\n")}\n`;
}

function seconds(value: number): string {
  return `${value.toFixed(1)} s`;
}
