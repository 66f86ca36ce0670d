/*
 * One order's life drawn by hand as SVG (the model is order-life.js): a lane per attempt, a bar per
 * step, the Supervisor's and the operator's marks across the lanes, and a time axis that cuts long idle
 * stretches out. A step's name sits inside its bar when it fits and below it otherwise, so a short step
 * is named too; the axis has ticks at round times in each stretch it draws. Every bar and mark carries
 * its figures (data-*) and a <title> with its times in the viewer's zone and in UTC, and takes the
 * keyboard's focus, so its title can be read one by one.
 */
import { frame, svg, titled } from "./charts.js";
import { clockTime, localDate } from "./format.js";

const WIDTH = 760;
const LEFT = 110;
const RIGHT = WIDTH - 10;
const TOP = 26;
const BAR = 18;
const PAD = 5;
const LABEL_ROW = 14;
/** Bars are never narrower than this, so a step of a few milliseconds can still be seen and pointed at. */
const MIN_BAR = 6;
/** Ticks on the time axis are at least this far apart. */
const TICK_SPACING = 84;
/** Round steps between ticks, in ms: from a millisecond to a day. */
const TICK_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
  600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];

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

export function duration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** How wide a label is drawn, in the picture's units (11px text, bold inside bars). */
export function labelWidth(text) {
  return text.length * 6.4 + 2;
}

/** A tick's label: the day, or the time to the minute, the second or the millisecond, as fine as the step. */
function tickLabel(at, step) {
  if (step >= 86_400_000) return localDate(at);
  if (step >= 60_000) return clockTime(at);
  if (step >= 1_000) return clockTime(at, { seconds: true });
  return clockTime(at, { millis: true }).replace(/0+$/, "");
}

/**
 * The axis's ticks: in each segment, the round instants `step` apart (the least step that keeps them
 * TICK_SPACING apart), or the segment's start when none falls in it; a tick whose label would run into
 * the one before is left out. Each tick: { at, x, label }.
 */
export function axisTicks(scale) {
  const ticks = [];
  for (const segment of scale.segments) {
    const span = segment.end - segment.start;
    const least = span > 0 && segment.width > 0 ? (TICK_SPACING * span) / segment.width : 0;
    const step = TICK_STEPS.find((s) => s >= least) ?? TICK_STEPS.at(-1);
    const inside = [];
    for (let at = Math.ceil(segment.start / step) * step; at <= segment.end; at += step) inside.push(at);
    for (const at of inside.length ? inside : [segment.start]) {
      ticks.push({ at, x: scale.at(at), label: tickLabel(at, step) });
    }
  }
  const kept = [];
  for (const tick of ticks) {
    const before = kept.at(-1);
    const room = before ? (labelWidth(before.label) + labelWidth(tick.label)) / 2 + 8 : 0;
    if (!before || tick.x - before.x >= room) kept.push(tick);
  }
  return kept;
}

/**
 * Where each bar's name goes: inside the bar when it fits, else in a row below the bars, under the
 * bar's start, in the first row where it runs into no other label. Answers per bar { inside, x, row },
 * and how many rows below the bars the lane needs.
 */
export function placeLabels(bars) {
  const rowEnds = [];
  const places = bars.map((bar) => {
    const width = labelWidth(bar.text);
    if (bar.x2 - bar.x1 >= width + 8) return { inside: true, x: bar.x1 + 4, row: -1 };
    const x = Math.max(LEFT, Math.min(bar.x1, RIGHT - width));
    let row = rowEnds.findIndex((end) => end + 6 <= x);
    if (row === -1) row = rowEnds.push(0) - 1;
    rowEnds[row] = x + width;
    return { inside: false, x, row };
  });
  return { places, rows: rowEnds.length };
}

function laneHeight(rows) {
  return PAD * 2 + BAR + rows * LABEL_ROW + (rows ? 2 : 0);
}

/**
 * One order's life (`order-life.js`): a lane per attempt, a bar per step with `data-step`,
 * `data-attempt`, `data-outcome` and a title naming them, the marks across every lane, and the time
 * axis with its ticks and cut gaps.
 */
export function drawOrderPicture(container, life) {
  const bars = life.lanes.reduce((n, lane) => n + lane.bars.length, 0);
  const label = `Order ${life.orderId}: ${life.lanes.length} attempt(s), ${bars} step bar(s), ${life.marks.length} mark(s).`;
  if (life.start === null) {
    container.replaceChildren(pictureFrame(TOP + 10, label, life.orderId));
    return;
  }
  const intervals = [...life.lanes.map((l) => [l.start, l.end]), ...life.marks.map((m) => [m.at, m.at])];
  const scale = gapScale(intervals, LEFT, RIGHT);
  const lanes = [];
  let y = TOP;
  for (const lane of life.lanes) {
    const drawn = drawLane(lane, y, scale);
    lanes.push(drawn.g);
    y += drawn.height;
  }
  const chart = pictureFrame(y + 40, label, life.orderId);
  chart.append(...lanes, drawAxis(scale, y));
  for (const mark of life.marks) chart.append(drawMark(mark, scale.at(mark.at), y));
  container.replaceChildren(chart);
}

function pictureFrame(height, label, orderId) {
  const chart = frame(WIDTH, height, label);
  chart.setAttribute("id", "order-svg");
  chart.dataset.orderId = orderId;
  // A group, not an image: the bars and marks inside are read and focused one by one.
  chart.setAttribute("role", "group");
  return chart;
}

function drawLane(lane, y, scale) {
  const kind = lane.compensation ? "compensation" : "forward";
  const g = svg("g", { class: `lane lane-${kind}`, "data-attempt": lane.attempt, "data-kind": kind });
  const geometry = lane.bars.map((bar) => {
    const x1 = scale.at(bar.start);
    const x2 = Math.max(x1 + MIN_BAR, scale.at(bar.end));
    return { bar, x1, x2, text: bar.undo ? `↶ ${bar.step}` : bar.step };
  });
  const { places, rows } = placeLabels(geometry);
  const height = laneHeight(rows);
  g.append(
    svg("rect", { class: "lane-band", x: 0, y, width: WIDTH, height }),
    svg(
      "text",
      { class: "lane-label", x: 4, y: y + PAD + 13 },
      `Attempt ${lane.attempt}${lane.compensation ? " · undo" : ""}`,
    ),
  );
  geometry.forEach((bar, i) => {
    g.append(drawBar(bar, places[i], y + PAD));
  });
  return { g, height };
}

function barTitle(bar) {
  const name = bar.undo ? `undo of ${bar.step}` : bar.step;
  const took = bar.end > bar.start ? `${((bar.end - bar.start) / 1000).toFixed(3)} s` : "an instant";
  const local = (ms) => clockTime(ms, { millis: true });
  const utc = (ms) => new Date(ms).toISOString();
  return (
    `${name} · attempt ${bar.attempt} · ${bar.outcome}, ${took}: ` +
    `${local(bar.start)} to ${local(bar.end)} (UTC ${utc(bar.start)} to ${utc(bar.end)})`
  );
}

function drawBar({ bar, x1, x2, text }, place, top) {
  const title = barTitle(bar);
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
      y: top,
      width: x2 - x1,
      height: BAR,
      rx: 3,
    }),
  );
  if (place.inside) {
    g.append(svg("text", { class: "bar-label inside", x: place.x, y: top + 13 }, text));
    return g;
  }
  const labelY = top + BAR + 12 + place.row * LABEL_ROW;
  const anchor = Math.min(Math.max((x1 + x2) / 2, place.x + 2), x2);
  g.append(
    svg("line", { class: "leader", x1: anchor, x2: anchor, y1: top + BAR, y2: labelY - 9 }),
    svg("text", { class: "bar-label outside", x: place.x, y: labelY }, text),
  );
  return g;
}

function drawMark(mark, x, bottom) {
  const local = clockTime(mark.at, { millis: true });
  const title = `${mark.by} at ${local} (UTC ${new Date(mark.at).toISOString()}): ${mark.detail}`;
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
    svg("line", { x1: x, x2: x, y1: TOP - 8, y2: bottom }),
    svg("path", { d: `M ${x - 6} ${TOP - 20} L ${x + 6} ${TOP - 20} L ${x} ${TOP - 8} Z` }),
  );
  return g;
}

function drawAxis(scale, bottom) {
  const g = svg("g", { class: "axis", "aria-hidden": "true" });
  const last = scale.segments.at(-1);
  g.append(svg("line", { x1: LEFT, x2: last.x + last.width, y1: bottom, y2: bottom }));
  for (const tick of axisTicks(scale)) {
    const x = Math.min(
      Math.max(tick.x, LEFT + labelWidth(tick.label) / 2),
      RIGHT - labelWidth(tick.label) / 2,
    );
    g.append(
      svg(
        "g",
        { class: "tick", "data-at": new Date(tick.at).toISOString() },
        svg("line", { x1: tick.x, x2: tick.x, y1: bottom, y2: bottom + 4 }),
        svg("text", { x, y: bottom + 15, "text-anchor": "middle" }, tick.label),
      ),
    );
  }
  scale.segments.forEach((segment, i) => {
    const next = scale.segments[i + 1];
    if (!next) return;
    const gap = segment.x + segment.width;
    g.append(
      svg(
        "text",
        { class: "gap", x: gap + (next.x - gap) / 2, y: bottom + 30, "text-anchor": "middle" },
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
