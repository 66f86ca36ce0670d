/*
 * One order (`#/orders/<id>`): its state, its life as a picture (order-life.js, order-picture.js) beside
 * its compensation log, its history as a table, and the operator commands its state allows
 * (operator-rules.js), each asking who and why (commands.js); the reason is shown for those it does not.
 * Opened cold from its address, it reads the order itself; it says so when there is no such order.
 */
import { request } from "./api.js";
import { ask } from "./commands.js";
import { $, cell, phrase } from "./format.js";
import { operatorCommands } from "./operator-rules.js";
import { orderLife } from "./order-life.js";
import { drawOrderPicture } from "./order-picture.js";

const COMMANDS = ["resubmit", "compensate"];
let selected = null;
/** What the picture was last drawn from: an order not in flight is redrawn only when it changed. */
let drawnFrom = null;

export function show(route) {
  if (selected !== route.orderId) {
    selected = route.orderId;
    drawnFrom = null;
    $("detail-id").textContent = route.orderId;
    $("detail-badge").textContent = "";
    $("detail-badge").removeAttribute("data-state");
    $("detail-body").hidden = true;
    // The last order's picture goes at once, so nothing of it is read as this order's.
    $("order-picture").replaceChildren();
    $("detail-missing").textContent = "Reading…";
    for (const command of COMMANDS) $(command).hidden = true;
  }
}

export function selectedOrder() {
  return selected;
}

/** Reads the order and its history and draws them; `hostNow` ends the bars still running. */
export async function refresh(hostNow) {
  const orderId = selected;
  if (orderId === null) return;
  const path = `/api/orders/${encodeURIComponent(orderId)}`;
  const [record, history] = await Promise.all([request(path), request(`${path}/history`)]);
  if (selected !== orderId) return;
  if (record.status !== 200 || history.status !== 200) {
    const status = record.status !== 200 ? record.status : history.status;
    $("detail-body").hidden = true;
    for (const command of COMMANDS) $(command).hidden = true;
    $("detail-missing").textContent =
      status === 404
        ? `No order ${orderId}.`
        : `Could not read the order: ${status} ${record.body.error || ""}`.trim();
    return;
  }
  $("detail-missing").textContent = "";
  $("detail-body").hidden = false;
  draw(record.body, history.body, hostNow);
}

function draw(record, history, hostNow) {
  $("detail-badge").textContent = record.processState;
  $("detail-badge").dataset.state = record.processState;
  const steps = record.steps.map((s) => `${s.name} ${s.status}`).join(", ");
  $("detail-state").textContent =
    `${record.processState} · workflow v${record.workflowVersion} · attempt ${record.attempt} · steps: ${steps}`;
  showActions(record);
  showPicture(record, history, hostNow);
  showCompensationLog(record);
  showHistory(history);
}

/** Offers the commands the record's state allows; says why of the others. */
function showActions(record) {
  const commands = operatorCommands(record);
  for (const command of COMMANDS) $(command).hidden = !commands[command].allowed;
  const reasons = COMMANDS.filter((c) => !commands[c].allowed).map((c) => commands[c].reason);
  $("actions-note").textContent = reasons.join(" ");
  $("actions-note").hidden = reasons.length === 0;
}

function showPicture(record, history, hostNow) {
  const from = `${record.orderId} ${record.updatedAt} ${history.entries.length}`;
  if (from === drawnFrom && record.lockedBy === null) return;
  drawnFrom = from;
  // The keyboard's place among the bars and marks is kept across a redraw.
  const focusable = () => [...$("order-picture").querySelectorAll("[tabindex]")];
  const focused = focusable().indexOf(document.activeElement);
  const model = orderLife(record, history, hostNow);
  drawOrderPicture($("order-picture"), model);
  if (focused >= 0) focusable()[focused]?.focus();
  const notes = [];
  if (model.lanes.length === 0) notes.push("No attempt yet: nothing to draw.");
  if (model.earlier > 0)
    notes.push(`${model.earlier} earlier transitions are folded into the history's summary and not drawn.`);
  $("order-picture-note").textContent = notes.join(" ");
}

/** The steps that applied (or may have applied) their effect, in the order they ran, and where each is now. */
function showCompensationLog(record) {
  const list = $("compensation-log");
  list.replaceChildren();
  for (const entry of record.compensationLog) {
    const step = record.steps.find((s) => s.name === entry.step);
    const li = document.createElement("li");
    li.dataset.step = entry.step;
    li.append(
      ...phrase(
        `${entry.step}: ${step ? step.status : "unknown"}` +
          (entry.reference === null ? " (no reference yet: in doubt)" : ""),
        ", logged ",
        { at: entry.recordedAt, options: { millis: true } },
      ),
    );
    list.appendChild(li);
  }
  $("compensation-log-empty").hidden = record.compensationLog.length > 0;
}

function showHistory(history) {
  const earlier = $("timeline-earlier");
  earlier.hidden = !history.earlier;
  if (history.earlier) {
    const { entries, since, until } = history.earlier;
    earlier.replaceChildren(
      ...phrase(`${entries} earlier transitions, `, { at: since }, " to ", { at: until }, "."),
    );
  }
  const body = $("timeline");
  body.replaceChildren();
  for (const e of history.entries) {
    const row = document.createElement("tr");
    cell(row, phrase({ at: e.at, options: { millis: true } }));
    cell(row, String(e.attempt));
    cell(row, e.actor);
    cell(row, e.command);
    cell(row, `${e.from} → ${e.to}`);
    cell(row, e.step || "");
    cell(row, e.code || "");
    body.appendChild(row);
  }
}

export function startOrder(afterCommand) {
  for (const command of COMMANDS)
    $(command).addEventListener("click", () => ask(command, selected, afterCommand));
}
