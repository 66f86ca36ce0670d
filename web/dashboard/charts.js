/*
 * The dashboard's charts, drawn by hand as SVG: orders finished per minute by terminal state, the
 * backlog as lines, each partner operation's calls and circuit breaker, and one order's life (lanes
 * of bars, marks on a time axis). Every figure is an element carrying its numbers (data-* attributes)
 * and a <title> naming it, so a screen reader and a test can read what is drawn; colours come from
 * the page's style sheet, so they follow light and dark. Values are written as text, never as markup.
 */
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

function titled(node, text) {
  node.prepend(svg("title", {}, text));
  return node;
}

/** "HH:MM" or "HH:MM:SS" of an instant, in UTC like every time on the page. */
export function clockTime(ms, seconds = false) {
  return new Date(ms).toISOString().slice(11, seconds ? 19 : 16);
}

/** A round number at or above `n`: 1, 2 or 5 times a power of ten. */
function roundUp(n) {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * power).find((m) => m >= n);
}

function frame(width, height, label) {
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
    `Orders finished per minute, ${clockTime(from)} to ${clockTime(Date.parse(finished.until))} UTC: ` +
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
export function drawLines(container, { label, series, ceiling }) {
  const width = 320;
  const height = 150;
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
  if (end > start) axis.append(svg("text", { x: plot.left, y: plot.bottom + 16 }, clockTime(start, true)));
  axis.append(
    svg("text", { x: plot.right, y: plot.bottom + 16, "text-anchor": "end" }, clockTime(end, true)),
  );
  chart.append(axis);
  container.replaceChildren(chart);
}

const BREAKER_NAMES = { closed: "closed", "half-open": "half-open", open: "open" };

/**
 * One row per partner operation: its breaker's state as a chip, the calls in its window split into
 * answered and failed (an open breaker makes none), and its states since the page opened as a strip.
 */
export function drawBreakers(container, breakers, samples) {
  const width = 640;
  const row = 24;
  const height = breakers.length * row + 22;
  const most = Math.max(1, ...breakers.map((b) => b.windowCalls));
  const bar = { left: 230, right: 390 };
  const strip = { left: 500, right: width - 6 };
  const open = breakers.filter((b) => b.status !== "closed").length;
  const chart = frame(
    width,
    height,
    `Partner operations: ${breakers.length - open} closed, ${open} not closed.`,
  );
  const first = samples.length ? samples[0].at : 0;
  const last = samples.length ? samples[samples.length - 1].at : 0;
  breakers.forEach((breaker, i) => {
    const y = i * row + 4;
    const failed = breaker.windowFailures;
    const answered = breaker.windowCalls - failed;
    const g = titled(
      svg("g", {
        class: "operation",
        "data-operation": breaker.operation,
        "data-status": breaker.status,
        "data-calls": breaker.windowCalls,
        "data-failed": failed,
      }),
      `${breaker.operation}: breaker ${BREAKER_NAMES[breaker.status] || breaker.status}; ` +
        `${answered} answered and ${failed} failed in its window`,
    );
    const scale = (n) => (n / most) * (bar.right - bar.left);
    g.append(
      svg("text", { x: 0, y: y + 14 }, breaker.operation),
      svg("rect", {
        class: `chip breaker-${breaker.status}`,
        x: 150,
        y: y + 2,
        width: 70,
        height: 16,
        rx: 8,
      }),
      svg(
        "text",
        { class: "chip-text", x: 185, y: y + 14, "text-anchor": "middle" },
        BREAKER_NAMES[breaker.status] || breaker.status,
      ),
      svg("rect", { class: "calls-answered", x: bar.left, y: y + 3, width: scale(answered), height: 14 }),
      svg("rect", {
        class: "calls-failed",
        x: bar.left + scale(answered),
        y: y + 3,
        width: scale(failed),
        height: 14,
      }),
      svg(
        "text",
        { class: "count", x: bar.left + scale(breaker.windowCalls) + 4, y: y + 14 },
        `${failed} of ${breaker.windowCalls} failed`,
      ),
    );
    g.append(stateStrip(breaker.operation, samples, { ...strip, y: y + 5, first, last }));
    chart.append(g);
  });
  const axis = svg("g", { class: "axis", "aria-hidden": "true" });
  const y = breakers.length * row + 16;
  axis.append(svg("text", { x: bar.left, y }, "calls in the window: answered, failed"));
  if (samples.length)
    axis.append(svg("text", { x: strip.left, y }, `states since ${clockTime(first, true)}`));
  chart.append(axis);
  container.replaceChildren(chart);
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

/**
 * A time scale that cuts the long idle stretches out: intervals closer than `join` share one linear
 * segment, and each gap between segments is drawn `gapWidth` wide whatever it lasted (a backoff of an
 * hour between attempts of seconds). Answers x for an instant, and the segments and gaps drawn.
 */
export function gapScale(intervals, left, right, gapWidth = 30) {
  const sorted = intervals.map(([a, b]) => [a, Math.max(a, b)]).sort((p, q) => p[0] - q[0]);
  const busy = sorted.reduce((sum, [a, b]) => sum + (b - a), 0);
  const join = Math.max(2_000, busy * 0.15);
  const merged = [];
  for (const [a, b] of sorted) {
    const last = merged[merged.length - 1];
    if (last && a - last[1] <= join) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  const free = right - left - (merged.length - 1) * gapWidth;
  const total = merged.reduce((sum, [a, b]) => sum + (b - a), 0);
  const shares = merged.map(([a, b]) => Math.max(total ? (b - a) / total : 1, 0.2));
  const shareSum = shares.reduce((a, b) => a + b, 0);
  let x = left;
  const segments = merged.map(([start, end], i) => {
    const segment = { start, end, x, width: (shares[i] / shareSum) * free };
    x += segment.width + gapWidth;
    return segment;
  });
  const at = (t) => {
    for (let i = 0; i < segments.length; i++) {
      const s = segments[i];
      if (t <= s.end || i === segments.length - 1) {
        if (t < s.start && i > 0) {
          const before = segments[i - 1];
          return before.x + before.width + ((t - before.end) / (s.start - before.end)) * gapWidth;
        }
        const span = s.end - s.start;
        const clamped = Math.min(Math.max(t, s.start), s.end);
        return span === 0 ? s.x + s.width / 2 : s.x + ((clamped - s.start) / span) * s.width;
      }
    }
    return left;
  };
  return { at, segments };
}

function duration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

const LANE = 30;
const PICTURE_LEFT = 150;
const PICTURE_TOP = 26;

/**
 * One order's life (`order-life.js`): a lane per attempt, a bar per step with `data-step`,
 * `data-attempt`, `data-outcome` and a title naming them, the marks across every lane, and the time
 * axis with its cut gaps. Bars and marks take the keyboard's focus, so their titles can be read one by one.
 */
export function drawOrderPicture(container, life) {
  const width = 760;
  const height = PICTURE_TOP + life.lanes.length * LANE + 34;
  const bars = life.lanes.reduce((n, lane) => n + lane.bars.length, 0);
  const chart = frame(
    width,
    height,
    `Order ${life.orderId}: ${life.lanes.length} attempt(s), ${bars} step bar(s), ${life.marks.length} mark(s).`,
  );
  chart.setAttribute("id", "order-svg");
  // A group, not an image: the bars and marks inside are read and focused one by one.
  chart.setAttribute("role", "group");
  if (life.start === null) {
    container.replaceChildren(chart);
    return;
  }
  const intervals = [...life.lanes.map((l) => [l.start, l.end]), ...life.marks.map((m) => [m.at, m.at])];
  const scale = gapScale(intervals, PICTURE_LEFT, width - 10);
  for (const [i, lane] of life.lanes.entries()) chart.append(drawLane(lane, i, scale, width));
  const bottom = PICTURE_TOP + life.lanes.length * LANE;
  chart.append(drawAxis(scale, bottom));
  for (const mark of life.marks) chart.append(drawMark(mark, scale.at(mark.at), bottom));
  container.replaceChildren(chart);
}

function drawLane(lane, index, scale, width) {
  const y = PICTURE_TOP + index * LANE;
  const kind = lane.compensation ? "compensation" : "forward";
  const g = svg("g", { class: `lane lane-${kind}`, "data-attempt": lane.attempt, "data-kind": kind });
  g.append(
    svg("rect", { class: "lane-band", x: 0, y, width, height: LANE }),
    svg(
      "text",
      { class: "lane-label", x: 4, y: y + 19 },
      `Attempt ${lane.attempt}${lane.compensation ? " · undo" : ""}`,
    ),
  );
  for (const bar of lane.bars) g.append(drawBar(bar, y, scale));
  return g;
}

function drawBar(bar, y, scale) {
  const x1 = scale.at(bar.start);
  const w = Math.max(4, scale.at(bar.end) - x1);
  const name = bar.undo ? `undo of ${bar.step}` : bar.step;
  const took = bar.end > bar.start ? `, ${((bar.end - bar.start) / 1000).toFixed(3)} s` : "";
  const title =
    `${name} · attempt ${bar.attempt} · ${bar.outcome} ` +
    `(${new Date(bar.start).toISOString()} to ${new Date(bar.end).toISOString()}${took})`;
  const g = titled(
    svg("g", {
      class: "bar",
      tabindex: 0,
      role: "img",
      "aria-label": title,
      "data-step": bar.step,
      "data-attempt": bar.attempt,
      "data-outcome": bar.outcome,
      "data-undo": bar.undo,
    }),
    title,
  );
  const slug = bar.outcome.replace(/\s+/g, "-");
  g.append(
    svg("rect", {
      class: `outcome-${slug}${bar.undo ? " undo" : ""}`,
      x: x1,
      y: y + 5,
      width: w,
      height: LANE - 10,
      rx: 3,
    }),
  );
  if (w > 70) {
    g.append(
      svg("text", { class: "bar-label", x: x1 + 4, y: y + 19 }, bar.undo ? `↶ ${bar.step}` : bar.step),
    );
  }
  return g;
}

function drawMark(mark, x, bottom) {
  const title = mark.label;
  const g = titled(
    svg("g", {
      class: `mark mark-${mark.kind.replace(/\s+/g, "-")}`,
      tabindex: 0,
      role: "img",
      "aria-label": title,
      "data-kind": mark.kind,
    }),
    title,
  );
  g.append(
    svg("line", { x1: x, x2: x, y1: PICTURE_TOP - 8, y2: bottom }),
    svg("path", {
      d: `M ${x - 6} ${PICTURE_TOP - 20} L ${x + 6} ${PICTURE_TOP - 20} L ${x} ${PICTURE_TOP - 8} Z`,
    }),
  );
  return g;
}

function drawAxis(scale, bottom) {
  const g = svg("g", { class: "axis", "aria-hidden": "true" });
  g.append(
    svg("line", {
      x1: PICTURE_LEFT,
      x2: scale.segments.at(-1).x + scale.segments.at(-1).width,
      y1: bottom,
      y2: bottom,
    }),
  );
  scale.segments.forEach((segment, i) => {
    g.append(svg("text", { x: segment.x, y: bottom + 14 }, clockTime(segment.start, true)));
    const next = scale.segments[i + 1];
    if (!next) return;
    const gap = segment.x + segment.width;
    g.append(
      svg(
        "text",
        { class: "gap", x: gap + (next.x - gap) / 2, y: bottom + 28, "text-anchor": "middle" },
        `+${duration(next.start - segment.end)}`,
      ),
      svg("path", {
        class: "cut",
        d: `M ${gap + 8} ${bottom - 5} l 6 10 M ${gap + 15} ${bottom - 5} l 6 10`,
      }),
    );
  });
  return g;
}
