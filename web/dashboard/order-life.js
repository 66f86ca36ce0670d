/*
 * One order's life as the dashboard draws it, derived from its record's history (GET
 * /api/orders/{id}/history): every transition, oldest first, each naming its actor, command, attempt
 * and step. Pure: no DOM, so it can be tested on its own.
 *
 * - A lane per attempt (the starter's claim opens it). A forward step is a bar from its `startStep` to
 *   what ended it in that attempt: `completeStep` (completed), `fail` or `beginCompensation` naming it
 *   (failed), the Supervisor's `recover` of the attempt (in doubt: it may have applied its effect),
 *   `defer` (deferred: the partner's circuit breaker was open).
 * - An undo is a bar from the previous transition of its compensation (`beginCompensation`,
 *   `resumeCompensation`, the undo before it) to its `compensateStep`: undone, or undo failed. An
 *   in-doubt step is first resolved (`resolveDoubt`); one that no undo follows had applied nothing.
 * - The Supervisor's recoveries and deadline extensions, and the operator's commands, are marks on the
 *   time axis.
 *
 * What the history does not hold is not drawn: the transitions folded into `earlier` past the record's
 * 40 kept, and a step's time at the partner (only the record's updates are timed).
 */

/** How each bar can end, as the picture names it. */
export const OUTCOMES = {
  completed: "completed",
  failed: "failed",
  inDoubt: "in doubt",
  undone: "undone",
  undoFailed: "undo failed",
  deferred: "deferred",
  notApplied: "not applied",
  running: "running",
  unknown: "ended unrecorded",
};

const MARK_KINDS = { recover: "recovery", extendDeadline: "deadline extended" };

/**
 * The picture's model: `lanes` (by attempt, each with its bars), `marks`, the time span, and how many
 * earlier transitions were folded away. `now` (ms since the epoch) ends the bars still running.
 */
export function orderLife(record, history, now) {
  const lanes = new Map();
  const marks = [];
  const laneOf = (entry) => {
    let lane = lanes.get(entry.attempt);
    if (!lane) {
      lane = {
        attempt: entry.attempt,
        compensation: false,
        start: time(entry.at),
        end: time(entry.at),
        bars: [],
      };
      lane.undoFrom = lane.start;
      lanes.set(entry.attempt, lane);
    }
    return lane;
  };
  for (const entry of history.entries) {
    if (entry.actor === "operator" || entry.actor === "supervisor") {
      marks.push(markOf(entry));
      if (entry.command === "recover" && lanes.has(entry.attempt)) endLane(lanes.get(entry.attempt), entry);
      continue;
    }
    const lane = laneOf(entry);
    lane.end = Math.max(lane.end, time(entry.at));
    apply(lane, entry);
  }
  const current = record.lockedBy !== null ? record.attempt : null;
  for (const lane of lanes.values()) settleOpenBars(lane, lane.attempt === current, now);
  const all = [...lanes.values()].sort((a, b) => a.attempt - b.attempt);
  const times = [...all.flatMap((l) => [l.start, l.end]), ...marks.map((m) => m.at)];
  return {
    orderId: record.orderId,
    lanes: all.map(({ undoFrom: _, ...lane }) => lane),
    marks,
    start: times.length ? Math.min(...times) : null,
    end: times.length ? Math.max(...times) : null,
    earlier: history.earlier ? history.earlier.entries : 0,
  };
}

function time(at) {
  return Date.parse(at);
}

function markOf(entry) {
  const kind = entry.actor === "operator" ? "operator" : MARK_KINDS[entry.command] || entry.command;
  const by =
    entry.actor === "operator"
      ? `Operator ${entry.command}`
      : `Supervisor ${MARK_KINDS[entry.command] || entry.command}`;
  const detail = `${entry.from} → ${entry.to}${entry.code ? `, ${entry.code}` : ""}`;
  return {
    at: time(entry.at),
    kind,
    attempt: entry.attempt,
    by,
    detail,
    label: `${by} at ${entry.at}: ${detail}`,
  };
}

function openBar(lane, step, undo, start) {
  const bar = { step, attempt: lane.attempt, undo, start, end: null, outcome: null };
  lane.bars.push(bar);
  return bar;
}

function openBarOf(lane, step, undo) {
  return lane.bars.find((b) => b.end === null && b.step === step && b.undo === undo);
}

function close(bar, at, outcome) {
  if (!bar) return;
  bar.end = at;
  bar.outcome = outcome;
}

/** One transition of the attempt, applied to its lane's bars. */
function apply(lane, entry) {
  const at = time(entry.at);
  switch (entry.command) {
    case "claim":
      lane.compensation = entry.to === "Compensating";
      lane.undoFrom = at;
      return;
    case "startStep":
      openBar(lane, entry.step, false, at);
      return;
    case "completeStep":
      close(openBarOf(lane, entry.step, false), at, OUTCOMES.completed);
      return;
    case "fail":
      closeForward(lane, entry, at, OUTCOMES.failed);
      return;
    case "beginCompensation":
      closeForward(lane, entry, at, OUTCOMES.failed);
      lane.compensation = true;
      lane.undoFrom = at;
      return;
    case "resumeCompensation":
      lane.compensation = true;
      lane.undoFrom = at;
      return;
    case "resolveDoubt":
      resolveDoubt(lane, entry.step, at);
      return;
    case "compensateStep":
      undo(lane, entry, at);
      return;
    case "defer":
      closeAll(lane, at, OUTCOMES.deferred);
      return;
    default:
      // finish, finishCompensation, releaseClaim: the attempt ends; nothing should be open.
      closeAll(lane, at, OUTCOMES.unknown);
  }
}

/** A forward step that the transition names (or any still open) failed. */
function closeForward(lane, entry, at, outcome) {
  const bar = entry.step ? openBarOf(lane, entry.step, false) : lane.bars.find((b) => b.end === null);
  close(bar, at, outcome);
}

/** The doubt is resolved: the undo's bar starts before it; without an undo after, nothing was applied. */
function resolveDoubt(lane, step, at) {
  const bar = openBar(lane, step, true, lane.undoFrom);
  close(bar, at, OUTCOMES.notApplied);
  bar.resolved = true;
  lane.undoFrom = at;
}

function undo(lane, entry, at) {
  const outcome = entry.code ? OUTCOMES.undoFailed : OUTCOMES.undone;
  const resolved = lane.bars.find(
    (b) => b.undo && b.step === entry.step && b.resolved && b.outcome === OUTCOMES.notApplied,
  );
  const bar = resolved || openBar(lane, entry.step, true, lane.undoFrom);
  if (resolved) delete resolved.resolved;
  close(bar, at, outcome);
  lane.undoFrom = at;
}

function closeAll(lane, at, outcome) {
  for (const bar of lane.bars) if (bar.end === null) close(bar, at, outcome);
}

/** The Supervisor recovered the attempt: what was running may have applied its effect. */
function endLane(lane, entry) {
  const at = time(entry.at);
  lane.end = Math.max(lane.end, at);
  closeAll(lane, at, OUTCOMES.inDoubt);
}

/** Bars nothing closed: running on, in the attempt in flight, or ended by something not recorded. */
function settleOpenBars(lane, inFlight, now) {
  for (const bar of lane.bars) {
    delete bar.resolved;
    if (bar.end !== null) continue;
    if (inFlight) {
      bar.end = Math.max(now, bar.start);
      bar.outcome = OUTCOMES.running;
      lane.end = Math.max(lane.end, bar.end);
    } else close(bar, lane.end, OUTCOMES.unknown);
  }
}
