/*
 * The overview's charts, drawn by hand as SVG: orders finished per minute by terminal state, the
 * backlog as lines, and each partner operation's calls and circuit breaker. Every figure is an element
 * carrying its numbers (data-* attributes) and a <title> naming it, so a screen reader and a test can
 * read what is drawn; colours come from the page's style sheet, so they follow light and dark. Times
 * are the viewer's. Values are written as text, never as markup.
 */
import { clockTime } from "./format.js";

const SVG = "http://www.w3.org/2000/svg";
const MINUTE_MS = 60_000;

/** An SVG element with attributes (null and undefined left out) and children (strings become text). */
export function svg(name, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  }
  node.append(...children);
  return node;
}

export function titled(node, text) {
  node.prepend(svg("title", {}, text));
  return node;
}

/** A round number at or above `n`: 1, 2 or 5 times a power of ten. */
export function roundUp(n) {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * power).find((m) => m >= n);
}

export function frame(width, height, label) {
  return svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": label,
    focusable: "false",
    class: "chart",
  });
}

/** Horizontal gridlines with their values, from 0 to `ceiling`, on the plot's left. */
function gridlines(plot, ceiling) {
  const g = svg("g", { class: "grid", "aria-hidden": "true" });
  for (const value of [0, ceiling / 2, ceiling]) {
    const y = plot.y(value);
    g.append(
      svg("line", { x1: plot.left, x2: plot.right, y1: y, y2: y }),
      svg("text", { x: plot.left - 4, y: y + 4, "text-anchor": "end" }, formatCount(value)),
    );
  }
  return g;
}

function formatCount(n) {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/**
 * Orders finished per minute over the hour, stacked by terminal state: one column per minute (a <g>
 * with `data-minute` and a title), one segment per state with `data-state` and `data-count`.
 */
export function drawFinished(container, finished, states) {
  const width = 640;
  const height = 190;
  const minutes = finished.byState[states[0]].length;
  const from = Date.parse(finished.from);
  const totals = Array.from({ length: minutes }, (_, i) =>
    states.reduce((sum, state) => sum + finished.byState[state][i], 0),
  );
  const ceiling = roundUp(Math.max(1, ...totals));
  const plot = { left: 36, right: width - 6, top: 8, bottom: height - 22 };
  plot.y = (value) => plot.bottom - (value / ceiling) * (plot.bottom - plot.top);
  const column = (plot.right - plot.left) / minutes;
  const sums = Object.fromEntries(states.map((s) => [s, finished.byState[s].reduce((a, b) => a + b, 0)]));
  const summary = states.map((s) => `${sums[s]} ${s}`).join(", ");
  const chart = frame(
    width,
    height,
    `Orders finished per minute, ${clockTime(from)} to ${clockTime(Date.parse(finished.until))}: ` +
      `${summary}; at most ${Math.max(...totals)} in a minute.`,
  );
  chart.append(gridlines(plot, ceiling));
  for (let i = 0; i < minutes; i++) {
    const start = from + i * MINUTE_MS;
    const counted = states.filter((s) => finished.byState[s][i] > 0);
    const text = counted.length ? counted.map((s) => `${finished.byState[s][i]} ${s}`).join(", ") : "none";
    const g = titled(
      svg("g", { "data-minute": new Date(start).toISOString() }),
      `${clockTime(start)}: ${text}`,
    );
    let base = 0;
    for (const state of counted) {
      const count = finished.byState[state][i];
      const x = plot.left + i * column + column * 0.1;
      g.append(
        svg("rect", {
          class: `segment state-${state}`,
          x,
          width: column * 0.8,
          y: plot.y(base + count),
          height: plot.y(base) - plot.y(base + count),
          "data-state": state,
          "data-count": count,
        }),
      );
      base += count;
    }
    chart.append(g);
  }
  chart.append(timeLabels(plot, from, minutes, column));
  container.replaceChildren(chart);
  return sums;
}

function timeLabels(plot, from, minutes, column) {
  const g = svg("g", { class: "axis", "aria-hidden": "true" });
  for (let i = 0; i < minutes; i += 10) {
    const x = plot.left + i * column;
    g.append(svg("text", { x, y: plot.bottom + 16 }, clockTime(from + i * MINUTE_MS)));
  }
  g.append(svg("line", { x1: plot.left, x2: plot.right, y1: plot.bottom, y2: plot.bottom }));
  return g;
}

/**
 * Lines over time (`series`: { name, points: [{ at, value }] }), with an optional ceiling drawn as a
 * dashed line (MAX_IN_FLIGHT). The latest value of each series is on the chart as `data-latest-<name>`.
 */
export function drawLines(container, { label, series, ceiling, width = 320, height = 150 }) {
  const points = series.flatMap((s) => s.points);
  const values = [...points.map((p) => p.value), ceiling ? ceiling.value : 0];
  const top = roundUp(Math.max(1, ...values));
  const start = Math.min(...points.map((p) => p.at));
  const end = Math.max(...points.map((p) => p.at));
  const plot = { left: 40, right: width - 8, top: 8, bottom: height - 22 };
  plot.y = (value) => plot.bottom - (value / top) * (plot.bottom - plot.top);
  const x = (at) =>
    end === start ? plot.right : plot.left + ((at - start) / (end - start)) * (plot.right - plot.left);
  const latest = series.map((s) => `${s.name} ${s.points.at(-1)?.value ?? 0}`).join(", ");
  const chart = frame(
    width,
    height,
    `${label}: now ${latest}${ceiling ? ` (${ceiling.label} ${ceiling.value})` : ""}.`,
  );
  chart.append(gridlines(plot, top));
  if (ceiling) {
    const y = plot.y(ceiling.value);
    chart.append(
      titled(
        svg("line", {
          class: "ceiling",
          x1: plot.left,
          x2: plot.right,
          y1: y,
          y2: y,
          "data-value": ceiling.value,
        }),
        `${ceiling.label}: ${ceiling.value}`,
      ),
    );
  }
  for (const s of series) {
    const last = s.points.at(-1);
    chart.setAttribute(`data-latest-${s.name.toLowerCase()}`, String(last ? last.value : 0));
    const path = s.points.map((p) => `${x(p.at).toFixed(1)},${plot.y(p.value).toFixed(1)}`).join(" ");
    chart.append(
      titled(svg("polyline", { class: `line ${s.className}`, points: path }), `${s.name}: ${last?.value}`),
    );
    if (last)
      chart.append(
        svg("circle", { class: `dot ${s.className}`, cx: x(last.at), cy: plot.y(last.value), r: 3 }),
      );
  }
  const axis = svg("g", { class: "axis", "aria-hidden": "true" });
  if (end > start)
    axis.append(svg("text", { x: plot.left, y: plot.bottom + 16 }, clockTime(start, { seconds: true })));
  axis.append(
    svg(
      "text",
      { x: plot.right, y: plot.bottom + 16, "text-anchor": "end" },
      clockTime(end, { seconds: true }),
    ),
  );
  chart.append(axis);
  container.replaceChildren(chart);
}

const BREAKER_NAMES = { closed: "closed", "half-open": "half-open", open: "open" };
const BREAKER_ROW = 21;

/**
 * One row per partner operation: its breaker's state as a chip; closed, the calls in its window split
 * into answered and failed; open or half-open (it makes no calls), when the next probe is due; and its
 * states since the page opened as a strip.
 */
export function drawBreakers(container, breakers, samples) {
  const width = 640;
  const height = breakers.length * BREAKER_ROW + 22;
  const open = breakers.filter((b) => b.status !== "closed").length;
  const chart = frame(
    width,
    height,
    `Partner operations: ${breakers.length - open} closed, ${open} not closed.`,
  );
  const layout = {
    most: Math.max(1, ...breakers.map((b) => b.windowCalls)),
    bar: { left: 230, right: 390 },
    strip: { left: 500, right: width - 6 },
    first: samples.length ? samples[0].at : 0,
    last: samples.length ? samples[samples.length - 1].at : 0,
  };
  breakers.forEach((breaker, i) => {
    const g = breakerRow(breaker, i * BREAKER_ROW + 4, layout);
    const box = { ...layout.strip, y: i * BREAKER_ROW + 9, first: layout.first, last: layout.last };
    g.append(stateStrip(breaker.operation, samples, box));
    chart.append(g);
  });
  const axis = svg("g", { class: "axis", "aria-hidden": "true" });
  const y = breakers.length * BREAKER_ROW + 16;
  axis.append(svg("text", { x: layout.bar.left, y }, "calls in the window: answered, failed"));
  if (samples.length) {
    axis.append(
      svg("text", { x: layout.strip.left, y }, `states since ${clockTime(layout.first, { seconds: true })}`),
    );
  }
  chart.append(axis);
  container.replaceChildren(chart);
}

/** What a breaker's row says of its calls: the window's when closed, the next probe otherwise. */
function breakerCalls(breaker) {
  const failed = breaker.windowFailures;
  if (breaker.status === "closed" && breaker.windowCalls === 0) {
    return { text: "no calls in the window", title: "no calls in its window" };
  }
  if (breaker.status === "closed") {
    return {
      text: `${failed} of ${breaker.windowCalls} failed`,
      title: `${breaker.windowCalls - failed} answered and ${failed} failed in its window`,
    };
  }
  const at = breaker.nextProbeAt ? clockTime(Date.parse(breaker.nextProbeAt), { seconds: true }) : "?";
  return breaker.status === "open"
    ? { text: `not calling · next probe ${at}`, title: `not calling; the next probe may go out at ${at}` }
    : { text: `one probe out · lease ends ${at}`, title: `one probe is out; its lease ends at ${at}` };
}

function breakerRow(breaker, y, { most, bar }) {
  const failed = breaker.windowFailures;
  const answered = breaker.windowCalls - failed;
  const calls = breakerCalls(breaker);
  const g = titled(
    svg("g", {
      class: "operation",
      "data-operation": breaker.operation,
      "data-status": breaker.status,
      "data-calls": breaker.windowCalls,
      "data-failed": failed,
    }),
    `${breaker.operation}: breaker ${BREAKER_NAMES[breaker.status] || breaker.status}; ${calls.title}`,
  );
  const scale = (n) => (n / most) * (bar.right - bar.left);
  g.append(
    svg("text", { x: 0, y: y + 14 }, breaker.operation),
    svg("rect", { class: `chip breaker-${breaker.status}`, x: 150, y: y + 2, width: 70, height: 16, rx: 8 }),
    svg(
      "text",
      { class: "chip-text", x: 185, y: y + 14, "text-anchor": "middle" },
      BREAKER_NAMES[breaker.status] || breaker.status,
    ),
  );
  if (breaker.status === "closed") {
    g.append(
      svg("rect", { class: "calls-answered", x: bar.left, y: y + 3, width: scale(answered), height: 14 }),
      svg("rect", {
        class: "calls-failed",
        x: bar.left + scale(answered),
        y: y + 3,
        width: scale(failed),
        height: 14,
      }),
    );
  }
  const x = breaker.status === "closed" ? bar.left + scale(breaker.windowCalls) + 4 : bar.left;
  g.append(svg("text", { class: "count", x, y: y + 14 }, calls.text));
  return g;
}

/** One operation's breaker states over the samples, a segment per run of one state. */
function stateStrip(operation, samples, box) {
  const g = svg("g", { class: "strip", "aria-hidden": "true" });
  const runs = [];
  for (const sample of samples) {
    const status = sample.status[operation];
    if (runs.length && runs[runs.length - 1].status === status) continue;
    runs.push({ status, from: sample.at });
  }
  const span = box.last - box.first;
  // With one reading so far, its state fills the strip.
  const x = (at) => (span === 0 ? box.left : box.left + ((at - box.first) / span) * (box.right - box.left));
  runs.forEach((run, i) => {
    const x1 = x(run.from);
    const x2 = i + 1 < runs.length ? x(runs[i + 1].from) : box.right;
    g.append(
      svg("rect", {
        class: `breaker-${run.status}`,
        x: x1,
        y: box.y,
        width: Math.max(2, x2 - x1),
        height: 10,
      }),
    );
  });
  return g;
}
