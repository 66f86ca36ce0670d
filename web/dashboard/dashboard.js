/*
 * The operator's dashboard over the orders API: it counts the orders per state and the attempts in
 * flight, draws them over time (orders finished per minute by terminal state over the last hour from
 * GET /api/stats; the backlog and each partner operation's breaker as sampled by this page since it
 * opened), shows the rest of GET /api/stats (the oldest Pending order's wait, dead-lettered and parked
 * messages, the Supervisor's last scan, orders finished per minute, the partner operations' circuit
 * breakers), finds an order by id and lists the orders of any state page by page, lists the orders that
 * need attention (Error, CompensationFailed, Processing past their deadline), draws one order's life
 * from its history (charts.js, order-life.js) above its compensation log and its history as text, and
 * resubmits or compensates it after asking who and why. Its Partner panel shows the simulated
 * partner's fault rates, a running outage with a countdown and the recent control changes
 * (GET /api/partner), and sets the rates, takes the partner down or brings it back. No framework and
 * no build step: plain DOM code, every value written as text. In Azure the page passes on the function
 * key it was opened with (?code=), to its API calls and to the modules it loads, and sends the admin
 * key (or, on the embedded host, the API token) with each command. Loaded as a module by index.html.
 */
const $ = (id) => document.getElementById(id);
const code = new URLSearchParams(location.search).get("code");
const readHeaders = code ? { "x-functions-key": code } : {};
// A module's own imports would not carry the key the host asks for, so this one loads them with it.
const moduleUrl = (file) =>
  new URL(`./${file}${code ? `?code=${encodeURIComponent(code)}` : ""}`, import.meta.url).href;
const [charts, life] = await Promise.all([
  import(moduleUrl("charts.js")),
  import(moduleUrl("order-life.js")),
]);
const TERMINAL_STATES = ["Processed", "Error", "Compensated", "CompensationFailed"];
/** Samples of the backlog and the breakers kept for the chart: the last hour, across reloads of the tab. */
const SAMPLES_KEY = "sas-dashboard-samples";
const SAMPLE_SPAN_MS = 3_600_000;
/** The host's clock at its last reading: running bars end there. */
let hostNow = Date.now();
let selected = null;
let pendingCommand = null;

async function getJson(path) {
  const response = await fetch(path, { headers: readHeaders });
  if (!response.ok) throw new Error(`${path} answered ${response.status}`);
  return response.json();
}

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.appendChild(td);
  return td;
}

async function refreshCounts() {
  const stats = await getJson("/api/stats");
  const list = $("counts");
  list.replaceChildren();
  for (const [state, n] of Object.entries(stats.counts)) {
    const li = document.createElement("li");
    li.dataset.state = state;
    const b = document.createElement("b");
    b.textContent = String(n);
    li.append(b, document.createTextNode(state));
    list.appendChild(li);
  }
  $("inflight").textContent = `In flight: ${stats.inFlight.processing} of ${stats.inFlight.max}`;
  hostNow = Date.parse(stats.throughput.until);
  showHealth(stats);
  showOverTime(stats);
}

function showOverTime(stats) {
  if (stats.finishedLastHour) showFinished(stats.finishedLastHour);
  const samples = sampled(stats);
  charts.drawLines($("pending-plot"), {
    label: "Pending orders",
    series: [
      {
        name: "Pending",
        className: "state-Pending",
        points: samples.map((s) => ({ at: s.at, value: s.pending })),
      },
    ],
  });
  charts.drawLines($("in-flight-plot"), {
    label: "Attempts in flight",
    series: [
      {
        name: "Processing",
        className: "state-Processing",
        points: samples.map((s) => ({ at: s.at, value: s.processing })),
      },
    ],
    ceiling: { value: stats.inFlight.max, label: "MAX_IN_FLIGHT" },
  });
  const breakers = stats.breakers || [];
  $("partner-chart").hidden = breakers.length === 0;
  if (breakers.length)
    charts.drawBreakers(
      $("partner-plot"),
      breakers,
      samples.filter((s) => s.breakers),
    );
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
    cell(row, charts.clockTime(from + i * 60_000));
    for (const n of counts) cell(row, String(n));
    body.appendChild(row);
  });
  $("finished-table-empty").hidden = body.children.length > 0;
}

/**
 * This reading added to the samples kept in the tab's session storage (one per host instant: a reading
 * reused by the host is not counted twice), the last hour of them answered, oldest first.
 */
function sampled(stats) {
  let samples = [];
  try {
    samples = JSON.parse(sessionStorage.getItem(SAMPLES_KEY) || "[]");
  } catch {
    samples = [];
  }
  const sample = {
    at: hostNow,
    pending: stats.counts.Pending,
    processing: stats.inFlight.processing,
    max: stats.inFlight.max,
    breakers: stats.breakers ? Object.fromEntries(stats.breakers.map((b) => [b.operation, b.status])) : null,
  };
  samples = samples.filter((s) => s.at < sample.at && s.at >= sample.at - SAMPLE_SPAN_MS);
  samples.push(sample);
  try {
    sessionStorage.setItem(SAMPLES_KEY, JSON.stringify(samples));
  } catch {
    // Storage full or refused: the chart still has this reading.
  }
  return samples.map((s) => (s.breakers ? { ...s, status: s.breakers } : s));
}

function age(ms) {
  const s = Math.floor(ms / 1000);
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
}

function counted(n) {
  return n.count + (n.capped ? "+" : "");
}

function showHealth(stats) {
  const missing = (figure) =>
    stats.unavailable.includes(figure) ? "Unavailable: the host could not read it." : null;
  const oldest = stats.oldestPending;
  $("oldest-pending").textContent = oldest
    ? `${oldest.orderId}, waiting ${age(oldest.ageMs)} (since ${oldest.since})`
    : "Nothing is Pending.";
  const m = stats.messages;
  const deadLettered = Object.entries(m.deadLettered).map(([queue, n]) => `${queue} ${counted(n)}`);
  $("dead-lettered").textContent =
    missing("messages") ||
    `${deadLettered.join(" · ")} (counted up to ${m.countedUpTo} per queue, at ${m.countedAt})`;
  $("parked").textContent = missing("messages") || `${counted(m.parked)} refused with a reason`;
  $("last-scan").textContent = missing("lastScan") || describeScan(stats.lastScan);
  const t = stats.throughput;
  $("throughput").textContent =
    `${t.finishedPerMinute.join(" · ")} (oldest first, the last minute up to ${t.until}; ` +
    `${t.perSecondLastMinute} per second)`;
  const w = stats.workflowVersions;
  $("workflow-versions").textContent = Object.entries(w.byVersion)
    .map(([version, use]) => {
      const current = Number(version) === w.default ? " (new orders)" : "";
      return `v${version}${current}: ${use.inFlight} in flight, ${use.awaitingOperator} awaiting an operator`;
    })
    .join(" · ");
  showBreakers(stats, missing("breakers"));
}

const BREAKER_STATES = { closed: "Closed", open: "Open", "half-open": "Half-open" };

/**
 * One row per partner operation: its breaker's state, the failed calls in its window (a closed breaker
 * counts them; an open one has stopped calling), and when the next probe may go out. Hidden on a host
 * without breakers.
 */
function showBreakers(stats, missing) {
  $("breakers-panel").hidden = stats.breakers === undefined;
  if (stats.breakers === undefined) return;
  const breakers = stats.breakers || [];
  const notClosed = breakers.filter((b) => b.status !== "closed").map((b) => b.operation);
  $("breakers-summary").textContent =
    missing ||
    (notClosed.length === 0
      ? "All closed: every partner operation is called."
      : `Not called now: ${notClosed.join(", ")}.`);
  $("breakers-table").hidden = breakers.length === 0;
  const body = $("breakers");
  body.replaceChildren();
  for (const breaker of breakers) {
    const row = document.createElement("tr");
    row.dataset.operation = breaker.operation;
    row.dataset.status = breaker.status;
    cell(row, breaker.operation);
    const since = breaker.openedAt ? ` since ${breaker.openedAt}` : "";
    cell(row, `${BREAKER_STATES[breaker.status] || breaker.status}${since}`);
    cell(row, describeWindow(breaker));
    cell(row, describeProbe(breaker));
    body.appendChild(row);
  }
}

function describeWindow(breaker) {
  if (breaker.status !== "closed") return "not calling";
  const n = breaker.consecutiveFailures;
  const run = n === 0 ? "" : n === 1 ? ", the last one failed" : `, the last ${n} in a row`;
  return `${breaker.windowFailures} of ${breaker.windowCalls} calls${run}`;
}

function describeProbe(breaker) {
  if (breaker.status === "open") return breaker.nextProbeAt;
  if (breaker.status === "half-open") return `out now; its lease ends at ${breaker.nextProbeAt}`;
  return "";
}

function describeScan(scan) {
  if (!scan) return "No scan recorded yet.";
  const { found, cost } = scan;
  return (
    `${scan.finishedAt} by ${scan.holder}: scanned ${found.scanned}, reset ${found.resets}, ` +
    `to Error ${found.toError}, to compensation ${found.toCompensation}, stalled ${found.stalled}, ` +
    `lost races ${found.lostRaces}${found.truncated ? ", truncated" : ""}${found.leaseLost ? ", lease lost" : ""}; ` +
    `${cost.pages} page(s), ${cost.requestUnits} RU, ${Math.round(cost.durationMs)} ms`
  );
}

/** A row of an order list: its id as the button that shows it, its state, last change and cause. */
function orderRow(record, state, withAttempt) {
  const row = document.createElement("tr");
  row.dataset.orderId = record.orderId;
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = record.orderId;
  button.setAttribute("aria-label", `Show order ${record.orderId}`);
  button.addEventListener("click", () => select(record.orderId));
  cell(row, "").appendChild(button);
  const inDoubt = record.steps.filter((s) => s.status === "InDoubt").map((s) => s.name);
  cell(row, state);
  cell(row, record.updatedAt);
  if (withAttempt) cell(row, String(record.attempt));
  const cause = record.lastError ? `${record.lastError.code}: ${record.lastError.message}` : "";
  cell(row, cause + (inDoubt.length ? ` (in doubt: ${inDoubt.join(", ")})` : ""));
  return row;
}

async function refreshAttention() {
  const [errors, failed, processing] = await Promise.all([
    getJson("/api/orders?state=Error&limit=50"),
    getJson("/api/orders?state=CompensationFailed&limit=50"),
    getJson("/api/orders?state=Processing&limit=200"),
  ]);
  const now = new Date().toISOString();
  const late = processing.items.filter((r) => r.completeBy !== null && r.completeBy < now);
  const rows = [...failed.items, ...errors.items, ...late];
  const body = $("attention");
  body.replaceChildren();
  for (const record of rows) {
    const state =
      record.processState === "Processing" ? "Processing, past its deadline" : record.processState;
    body.appendChild(orderRow(record, state, false));
  }
  $("attention-empty").hidden = rows.length > 0;
}

/** The list of one state (or all), page by page: the tokens of the pages before the one shown. */
const browsing = { tokens: [null], next: null };

async function showBrowsePage() {
  const state = $("browse-state").value;
  const limit = $("browse-limit").value;
  const token = browsing.tokens[browsing.tokens.length - 1];
  const query = new URLSearchParams({ limit });
  if (state) query.set("state", state);
  if (token) query.set("continuation", token);
  const page = await getJson(`/api/orders?${query}`);
  const body = $("browse");
  body.replaceChildren(...page.items.map((record) => orderRow(record, record.processState, true)));
  browsing.next = page.continuation;
  const number = browsing.tokens.length;
  $("browse-page").textContent =
    page.items.length === 0
      ? `Page ${number}: no orders${state ? ` in ${state}` : ""}.`
      : `Page ${number}: ${page.items.length} order(s)${state ? ` in ${state}` : ""}${page.continuation ? "" : ", the last page"}.`;
  $("browse-next").disabled = !page.continuation;
  $("browse-prev").disabled = number === 1;
  $("browse-first").disabled = number === 1;
}

function browse(move) {
  if (move === "first") browsing.tokens = [null];
  if (move === "next" && browsing.next) browsing.tokens.push(browsing.next);
  if (move === "previous" && browsing.tokens.length > 1) browsing.tokens.pop();
  showBrowsePage().catch((error) => ($("browse-page").textContent = `Could not list: ${error.message}`));
}

/** Finds the order with exactly this id; says so when there is none. */
async function search(event) {
  event.preventDefault();
  const orderId = $("search-id").value.trim();
  if (!orderId) return;
  const response = await fetch(`/api/orders/${encodeURIComponent(orderId)}`, { headers: readHeaders });
  if (response.status === 404) {
    $("search-result").textContent = `No order ${orderId}.`;
    return;
  }
  if (!response.ok) {
    const answer = await response.json().catch(() => ({}));
    $("search-result").textContent = `Could not look it up: ${response.status} ${answer.error || ""}`.trim();
    return;
  }
  $("search-result").textContent = `Found ${orderId}; shown below.`;
  select(orderId);
}

async function refreshDetail() {
  if (!selected) return;
  const [record, history] = await Promise.all([
    getJson(`/api/orders/${encodeURIComponent(selected)}`),
    getJson(`/api/orders/${encodeURIComponent(selected)}/history`),
  ]);
  $("detail").hidden = false;
  $("detail-id").textContent = record.orderId;
  const steps = record.steps.map((s) => `${s.name} ${s.status}`).join(", ");
  $("detail-state").textContent =
    `${record.processState} · workflow v${record.workflowVersion} · attempt ${record.attempt} · steps: ${steps}`;
  showPicture(record, history);
  showCompensationLog(record);
  const list = $("timeline");
  list.replaceChildren();
  if (history.earlier) {
    const li = document.createElement("li");
    const { entries, since, until } = history.earlier;
    li.textContent = `${entries} earlier transitions, ${since} to ${until}`;
    list.appendChild(li);
  }
  for (const e of history.entries) {
    const li = document.createElement("li");
    li.textContent =
      `${e.at} · attempt ${e.attempt} · ${e.actor} ${e.command}: ${e.from} → ${e.to}` +
      (e.step ? ` · ${e.step}` : "") +
      (e.code ? ` · ${e.code}` : "");
    list.appendChild(li);
  }
}

/** What the picture was last drawn from: an order not in flight is redrawn only when it changed. */
let drawnFrom = null;

function showPicture(record, history) {
  const from = `${record.orderId} ${record.updatedAt} ${history.entries.length}`;
  if (from === drawnFrom && record.lockedBy === null) return;
  drawnFrom = from;
  // The keyboard's place among the bars and marks is kept across a redraw.
  const focusable = () => [...$("order-picture").querySelectorAll("[tabindex]")];
  const focused = focusable().indexOf(document.activeElement);
  const model = life.orderLife(record, history, Math.max(hostNow, Date.now()));
  charts.drawOrderPicture($("order-picture"), model);
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
    li.textContent =
      `${entry.step}, logged ${entry.recordedAt}: ${step ? step.status : "unknown"}` +
      (entry.reference === null ? " (no reference yet: in doubt)" : "");
    list.appendChild(li);
  }
  $("compensation-log-empty").hidden = record.compensationLog.length > 0;
}

async function refresh() {
  try {
    await Promise.all([refreshCounts(), refreshAttention(), refreshDetail()]);
    $("error").textContent = "";
  } catch (error) {
    $("error").textContent = `Could not refresh: ${error.message}`;
  }
}

function select(orderId) {
  selected = orderId;
  refreshDetail().then(
    () => {
      $("detail-title").scrollIntoView();
      $("detail-title").focus({ preventScroll: true });
    },
    (error) => ($("error").textContent = error.message),
  );
}

function ask(command) {
  pendingCommand = command;
  $("confirm-title").textContent = `${command === "resubmit" ? "Resubmit" : "Compensate"} ${selected}?`;
  $("confirm-error").textContent = "";
  $("confirm").showModal();
  $("operator").focus();
}

/** A command's headers: the admin key for the Functions host, or the embedded host's API token. */
function commandHeaders(secret) {
  const headers = { "Content-Type": "application/json" };
  if (secret) {
    headers["x-functions-key"] = secret;
    headers.Authorization = `Bearer ${secret}`;
  }
  return headers;
}

async function confirm(event) {
  event.preventDefault();
  const headers = commandHeaders($("secret").value);
  const response = await fetch(`/api/orders/${encodeURIComponent(selected)}/${pendingCommand}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ operator: $("operator").value, reason: $("reason").value }),
  });
  const answer = await response.json().catch(() => ({}));
  if (response.status !== 202) {
    const issues = (answer.issues || []).map((i) => `${i.field}: ${i.message}`).join("; ");
    $("confirm-error").textContent = `${response.status} ${answer.message || issues || answer.error || ""}`;
    return;
  }
  $("confirm").close();
  await refresh();
}

const RATES = ["transient", "permanent", "slow", "lostReply"];
const RATE_NAMES = { transient: "transient", permanent: "permanent", slow: "slow", lostReply: "lost reply" };
const CHANGE_NAMES = { faults: "Fault rates set", outage: "Taken down", recovered: "Brought back" };
/** Once the operator edits a rate, the refreshes stop overwriting the form until it is sent. */
let ratesEdited = false;
let outageUntil = null;
/** Counts the commands answered, so that a read started before one does not show the older state after it. */
let commandsAnswered = 0;
let commandRunning = false;

/** Written only when it changes, so that a screen reader hears the live status once. */
function setStatus(text) {
  if ($("partner-status").textContent !== text) $("partner-status").textContent = text;
}

/** A refused request as the panel shows it: the status, then the host's or the partner's reason. */
function refusal(status, answer) {
  const reason = [answer.error, answer.message].filter(Boolean).join(": ");
  return `${status}${reason ? ` ${reason}` : ""}`;
}

/** The partner's state, or why it cannot be shown; never throws, so the rest of the page refreshes on. */
async function refreshPartner() {
  let response;
  let answer;
  const before = commandsAnswered;
  try {
    response = await fetch("/api/partner", { headers: readHeaders });
    answer = await response.json().catch(() => ({}));
  } catch (error) {
    setStatus(`Could not read the partner: ${error.message}`);
    return;
  }
  if (before !== commandsAnswered || commandRunning) return;
  if (response.status === 200) showPartner(answer);
  else if (!showNoControls(response.status, answer)) {
    setStatus(`Could not read the partner: ${refusal(response.status, answer)}`);
  }
}

/** A real partner has no control API: the panel says so and offers no controls. */
function showNoControls(status, answer) {
  if (status !== 404 || answer.error !== "no-partner-controls") return false;
  $("partner-controls").hidden = true;
  $("partner-countdown").hidden = true;
  outageUntil = null;
  setStatus(
    `This partner has no controls: its fault rates and outages cannot be set from here. ${answer.message || ""}`.trim(),
  );
  return true;
}

function showPartner(state) {
  $("partner-controls").hidden = false;
  outageUntil = state.outage ? state.outage.until : null;
  setStatus(
    state.outage
      ? `Down since ${state.outage.since}: every call is refused until ${state.outage.until}.`
      : `Up: calls are answered, with the fault rates below (slow calls wait ${state.slowMs} ms).`,
  );
  showCountdown();
  for (const rate of RATES) {
    $(`partner-rate-${rate}`).textContent = String(state.faults[rate]);
    if (!ratesEdited) $(`rate-${rate}`).value = String(state.faults[rate]);
  }
  const body = $("partner-changes");
  body.replaceChildren();
  for (const change of [...state.changes].reverse()) {
    const row = document.createElement("tr");
    row.dataset.change = change.change;
    cell(row, change.at);
    cell(row, CHANGE_NAMES[change.change] || change.change);
    cell(row, change.by);
    cell(row, describeChange(change));
    body.appendChild(row);
  }
  $("partner-changes-empty").hidden = state.changes.length > 0;
}

function describeChange(change) {
  if (change.change === "faults" && change.faults) {
    return RATES.map((rate) => `${RATE_NAMES[rate]} ${change.faults[rate]}`).join(", ");
  }
  return change.change === "outage" && change.until ? `until ${change.until}` : "";
}

/** The seconds left of a running outage, by this browser's clock, updated every second. */
function showCountdown() {
  const countdown = $("partner-countdown");
  countdown.hidden = outageUntil === null;
  if (outageUntil === null) return;
  const left = Math.ceil((Date.parse(outageUntil) - Date.now()) / 1000);
  countdown.textContent =
    left > 0 ? `Back in ${age(left * 1000)}.` : "The outage is over; the partner is answering again.";
}

/** Sends one change to the operator API; the partner's new state on success, its reason otherwise. */
async function partnerCommand(method, path, body) {
  if (commandRunning) return false;
  commandRunning = true;
  $("partner-error").textContent = "";
  try {
    const response = await fetch(path, {
      method,
      headers: commandHeaders($("partner-secret").value),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = await response.json().catch(() => ({}));
    commandsAnswered += 1;
    if (response.status === 200) {
      showPartner(answer);
      return true;
    }
    if (!showNoControls(response.status, answer)) {
      $("partner-error").textContent = `Refused: ${refusal(response.status, answer)}`;
    }
  } catch (error) {
    $("partner-error").textContent = `Could not reach the host: ${error.message}`;
  } finally {
    commandRunning = false;
  }
  return false;
}

async function setFaults(event) {
  event.preventDefault();
  const faults = Object.fromEntries(RATES.map((rate) => [rate, Number($(`rate-${rate}`).value)]));
  if (await partnerCommand("POST", "/api/partner/faults", faults)) {
    ratesEdited = false;
  }
}

function takeDown(event) {
  event.preventDefault();
  const seconds = Number($("outage-seconds").value);
  void partnerCommand("POST", "/api/partner/outage", { seconds });
}

function nameTakeDown() {
  const seconds = $("outage-seconds").value;
  $("partner-take-down").textContent = `Take the partner down for ${seconds || "N"} seconds`;
}

function startPartnerPanel() {
  $("partner-faults-form").addEventListener("input", () => (ratesEdited = true));
  $("partner-faults-form").addEventListener("submit", (event) => void setFaults(event));
  $("partner-outage-form").addEventListener("submit", takeDown);
  $("outage-seconds").addEventListener("input", nameTakeDown);
  $("partner-recover").addEventListener("click", () => partnerCommand("DELETE", "/api/partner/outage"));
  refreshPartner();
  setInterval(refreshPartner, 2000);
  setInterval(showCountdown, 1000);
}

function startFind() {
  $("search-form").addEventListener("submit", (event) => void search(event));
  $("browse-form").addEventListener("submit", (event) => {
    event.preventDefault();
    browse("first");
  });
  $("browse-state").addEventListener("change", () => browse("first"));
  $("browse-limit").addEventListener("change", () => browse("first"));
  $("browse-first").addEventListener("click", () => browse("first"));
  $("browse-prev").addEventListener("click", () => browse("previous"));
  $("browse-next").addEventListener("click", () => browse("next"));
  browse("first");
}

function start() {
  $("resubmit").addEventListener("click", () => ask("resubmit"));
  $("compensate").addEventListener("click", () => ask("compensate"));
  $("confirm-cancel").addEventListener("click", () => $("confirm").close());
  $("confirm-form").addEventListener("submit", (event) => void confirm(event));
  startPartnerPanel();
  startFind();
  refresh().then(() => {
    // When the first reading is on the page: what the page's load time is measured by.
    document.documentElement.dataset.drawnAtMs = String(Math.round(performance.now()));
  });
  setInterval(refresh, 2000);
}

// index.html adds this script to its head, which may run it before the body is parsed.
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
