/*
 * The partner's circuit breakers as a table (the Partner view): per operation its state, why it is in
 * it, and when the next probe is due, counted down on the host's clock. From `breakers` of GET
 * /api/stats (BreakerView). An open breaker's view says when it opened and, after a failed probe, since
 * when it is open again, and which failures opened it (`opening`: { cause: "run" | "rate",
 * consecutiveFailures, windowCalls, windowFailures, windowMs }), unless the state was stored before the
 * host kept them.
 */
import { $, age, cell, phrase } from "./format.js";

const STATES = { closed: "Closed", open: "Open", "half-open": "Half-open" };

/** Why a breaker is as it is, as parts of a phrase (strings, and `{ at }` for times). */
export function breakerWhy(breaker) {
  if (breaker.status === "closed") {
    if (breaker.windowCalls === 0) return ["No calls in the window."];
    const n = breaker.consecutiveFailures;
    const run = n === 0 ? "" : n === 1 ? "; the last call failed" : `; the last ${n} failed in a row`;
    return [`${breaker.windowFailures} of ${breaker.windowCalls} calls in the window failed${run}.`];
  }
  const parts = ["Opened at ", { at: breaker.openedAt }, openingCause(breaker.opening)];
  if (breaker.status === "open" && breaker.since && breaker.since !== breaker.openedAt) {
    parts.push(" A probe failed at ", { at: breaker.since }, "; open again since.");
  }
  if (breaker.status === "half-open" && breaker.since) {
    parts.push(" A probe went out at ", { at: breaker.since }, ".");
  }
  return parts;
}

function openingCause(opening) {
  if (!opening) {
    return (
      " by transient failures: a run of them or their share of the window's calls " +
      "(stored before the host kept which, and how many)."
    );
  }
  if (opening.cause === "run") return `: ${opening.consecutiveFailures} transient failures in a row.`;
  return (
    `: ${opening.windowFailures} of ${opening.windowCalls} calls failed transiently ` +
    `in ${Math.round(opening.windowMs / 1000)} s.`
  );
}

/** When the next probe is due, counted from `now` (the host's clock, ms), as parts of a phrase. */
export function nextProbe(breaker, now) {
  if (breaker.status === "closed" || !breaker.nextProbeAt) return [];
  const left = Date.parse(breaker.nextProbeAt) - now;
  if (breaker.status === "half-open") {
    return ["One probe is out; its lease ends ", ...when(left), { at: breaker.nextProbeAt }, ")."];
  }
  return left > 0
    ? ["In ", age(left + 999), " (", { at: breaker.nextProbeAt }, ")."]
    : ["Due now (", { at: breaker.nextProbeAt }, ")."];
}

function when(left) {
  return left > 0 ? [`in ${age(left + 999)} (`] : ["now ("];
}

/**
 * The table: one row per operation, hidden when there are none; a summary of those not called.
 * `breakers` undefined: a host without breakers; null: the host could not read them.
 */
export function showBreakers(breakers, now) {
  $("breakers-panel").hidden = breakers === undefined;
  if (breakers === undefined) return;
  const list = breakers || [];
  const notClosed = list.filter((b) => b.status !== "closed").map((b) => b.operation);
  const summary =
    breakers === null
      ? "Unavailable: the host could not read it."
      : notClosed.length === 0
        ? "All closed: every partner operation is called."
        : `Not called now: ${notClosed.join(", ")}.`;
  // Written only when it changes, so that a screen reader hears it once.
  if ($("breakers-summary").textContent !== summary) $("breakers-summary").textContent = summary;
  $("breakers-table").hidden = list.length === 0;
  const body = $("breakers");
  body.replaceChildren();
  for (const breaker of list) {
    const row = document.createElement("tr");
    row.dataset.operation = breaker.operation;
    row.dataset.status = breaker.status;
    cell(row, breaker.operation);
    const state = STATES[breaker.status] || breaker.status;
    cell(row, breaker.status === "closed" ? state : phrase(`${state} since `, { at: breaker.since }));
    cell(row, phrase(...breakerWhy(breaker)));
    cell(row, phrase(...nextProbe(breaker, now)));
    body.appendChild(row);
  }
}
