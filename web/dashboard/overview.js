/*
 * The overview (`#/`): the orders per state (each a link to its list), orders finished per minute over
 * the last hour by terminal state (GET /api/stats), the backlog and each partner operation's breaker as
 * sampled by this page since it opened, and the rest of the stats as Health. Fits a laptop's screen.
 */
import * as charts from "./charts.js";
import { $, age, cell, clockTime, phrase } from "./format.js";
import { ordersHref, partnerHref } from "./router.js";

const TERMINAL_STATES = ["Processed", "Error", "Compensated", "CompensationFailed"];
/** Samples of the backlog and the breakers kept for the charts: the last hour, across reloads of the tab. */
const SAMPLES_KEY = "sas-dashboard-samples";
const SAMPLE_SPAN_MS = 3_600_000;
let samples = [];

/**
 * This reading added to the samples kept in the tab's session storage (one per host instant: a reading
 * reused by the host is not counted twice), the last hour of them kept, oldest first. Taken at every
 * reading, whichever view is shown, so the charts have no holes.
 */
export function sample(stats, at) {
  let kept = [];
  try {
    kept = JSON.parse(sessionStorage.getItem(SAMPLES_KEY) || "[]");
  } catch {
    kept = [];
  }
  const reading = {
    at,
    pending: stats.counts.Pending,
    processing: stats.inFlight.processing,
    max: stats.inFlight.max,
    breakers: stats.breakers ? Object.fromEntries(stats.breakers.map((b) => [b.operation, b.status])) : null,
  };
  kept = kept.filter((s) => s.at < reading.at && s.at >= reading.at - SAMPLE_SPAN_MS);
  kept.push(reading);
  try {
    sessionStorage.setItem(SAMPLES_KEY, JSON.stringify(kept));
  } catch {
    // Storage full or refused: the charts still have this reading.
  }
  samples = kept;
}

/** Draws the overview from a reading of GET /api/stats. */
export function draw(stats) {
  showCounts(stats.counts);
  if (stats.finishedLastHour) showFinished(stats.finishedLastHour);
  charts.drawLines($("backlog-plot"), {
    label: "The backlog",
    width: 440,
    height: 190,
    series: [
      {
        name: "Pending",
        className: "state-Pending",
        points: samples.map((s) => ({ at: s.at, value: s.pending })),
      },
      {
        name: "Processing",
        className: "state-Processing",
        points: samples.map((s) => ({ at: s.at, value: s.processing })),
      },
    ],
    ceiling: { value: stats.inFlight.max, label: "MAX_IN_FLIGHT" },
  });
  showBreakers(stats);
  showHealth(stats);
}

function showCounts(counts) {
  const list = $("counts");
  list.replaceChildren();
  for (const [state, n] of Object.entries(counts)) {
    const li = document.createElement("li");
    li.dataset.state = state;
    const link = document.createElement("a");
    link.href = ordersHref({ state });
    const b = document.createElement("b");
    b.textContent = String(n);
    link.append(b, document.createTextNode(state));
    link.setAttribute("aria-label", `${n} ${state}: list them`);
    li.append(link);
    list.appendChild(li);
  }
  const attention = document.createElement("li");
  attention.className = "attention";
  const link = document.createElement("a");
  link.href = ordersHref({ needs: "attention" });
  link.textContent = "Needing attention →";
  attention.append(link);
  list.appendChild(attention);
}

function showFinished(finished) {
  const sums = charts.drawFinished($("finished-plot"), finished, TERMINAL_STATES);
  const legend = $("finished-legend");
  legend.replaceChildren();
  for (const state of TERMINAL_STATES) {
    const li = document.createElement("li");
    li.dataset.state = state;
    const swatch = document.createElement("span");
    swatch.className = `swatch state-${state}`;
    li.append(swatch, document.createTextNode(`${state} ${sums[state]}`));
    legend.appendChild(li);
  }
  const body = $("finished-table");
  body.replaceChildren();
  const from = Date.parse(finished.from);
  finished.byState[TERMINAL_STATES[0]].forEach((_, i) => {
    const counts = TERMINAL_STATES.map((state) => finished.byState[state][i]);
    if (counts.every((n) => n === 0)) return;
    const row = document.createElement("tr");
    cell(row, clockTime(from + i * 60_000));
    for (const n of counts) cell(row, String(n));
    body.appendChild(row);
  });
  $("finished-figures").hidden = body.children.length === 0;
  $("finished-table-empty").hidden = body.children.length > 0;
}

/** The breakers' chart, and a line saying which are not called; hidden on a host without breakers. */
function showBreakers(stats) {
  $("overview-breakers").hidden = stats.breakers === undefined;
  if (stats.breakers === undefined) return;
  const summary = $("overview-breakers-summary");
  if (stats.breakers === null) {
    summary.textContent = "Unavailable: the host could not read them.";
    $("partner-plot").replaceChildren();
    return;
  }
  const notClosed = stats.breakers.filter((b) => b.status !== "closed");
  summary.replaceChildren();
  if (notClosed.length === 0) summary.textContent = "All closed: every partner operation is called.";
  else {
    const link = document.createElement("a");
    link.href = partnerHref();
    link.textContent = "why, and when they are probed";
    summary.append(`Not called now: ${notClosed.map((b) => b.operation).join(", ")} (`, link, ").");
  }
  const withBreakers = samples.filter((s) => s.breakers).map((s) => ({ ...s, status: s.breakers }));
  charts.drawBreakers($("partner-plot"), stats.breakers, withBreakers);
}

function counted(n) {
  return n.count + (n.capped ? "+" : "");
}

function showHealth(stats) {
  const missing = (figure) =>
    stats.unavailable.includes(figure) ? "Unavailable: the host could not read it." : null;
  const oldest = stats.oldestPending;
  $("oldest-pending").replaceChildren(
    ...(oldest
      ? phrase(`${oldest.orderId}, waiting ${age(oldest.ageMs)} (since `, { at: oldest.since }, ")")
      : phrase("Nothing is Pending.")),
  );
  const m = stats.messages;
  const deadLettered = Object.entries(m.deadLettered).map(([queue, n]) => `${queue} ${counted(n)}`);
  $("dead-lettered").replaceChildren(
    ...(missing("messages")
      ? phrase(missing("messages"))
      : phrase(
          `${deadLettered.join(" · ")} (counted up to ${m.countedUpTo} per queue, at `,
          { at: m.countedAt },
          ")",
        )),
  );
  $("parked").textContent = missing("messages") || `${counted(m.parked)} refused with a reason`;
  $("last-scan").replaceChildren(
    ...(missing("lastScan") ? phrase(missing("lastScan")) : describeScan(stats.lastScan)),
  );
  const t = stats.throughput;
  $("throughput").replaceChildren(
    ...phrase(
      `${t.finishedPerMinute.join(" · ")} (oldest first, the last minute up to `,
      { at: t.until },
      `; ${t.perSecondLastMinute} per second)`,
    ),
  );
  const w = stats.workflowVersions;
  $("workflow-versions").textContent = Object.entries(w.byVersion)
    .map(([version, use]) => {
      const current = Number(version) === w.default ? " (new orders)" : "";
      return `v${version}${current}: ${use.inFlight} in flight, ${use.awaitingOperator} awaiting an operator`;
    })
    .join(" · ");
}

function describeScan(scan) {
  if (!scan) return phrase("No scan recorded yet.");
  const { found, cost } = scan;
  return phrase(
    { at: scan.finishedAt },
    ` by ${scan.holder}: scanned ${found.scanned}, reset ${found.resets}, ` +
      `to Error ${found.toError}, to compensation ${found.toCompensation}, stalled ${found.stalled}, ` +
      `lost races ${found.lostRaces}${found.truncated ? ", truncated" : ""}${found.leaseLost ? ", lease lost" : ""}; ` +
      `${cost.pages} page(s), ${cost.requestUnits} RU, ${Math.round(cost.durationMs)} ms`,
  );
}
