/*
 * The operator's dashboard over the orders API: it counts the orders per state and the attempts in
 * flight, shows the rest of GET /api/stats (the oldest Pending order's wait, dead-lettered and parked
 * messages, the Supervisor's last scan, orders finished per minute, the partner operations' circuit
 * breakers), lists the orders that need
 * attention (Error, CompensationFailed, Processing past their deadline), shows one order's timeline
 * from its history, and resubmits or compensates it after asking who and why. Its Partner panel shows
 * the simulated partner's fault rates, a running outage with a countdown and the recent control changes
 * (GET /api/partner), and sets the rates, takes the partner down or brings it back. No framework and
 * no build step: plain DOM code, every value written as text. In Azure the page passes on the function
 * key it was opened with (?code=), and sends the admin key (or, on the embedded host, the API token)
 * with each command. Loaded as a module by index.html.
 */
const $ = (id) => document.getElementById(id);
const code = new URLSearchParams(location.search).get("code");
const readHeaders = code ? { "x-functions-key": code } : {};
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
  showHealth(stats);
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
    const row = document.createElement("tr");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = record.orderId;
    button.setAttribute("aria-label", `Show order ${record.orderId}`);
    button.addEventListener("click", () => select(record.orderId));
    cell(row, "").appendChild(button);
    const inDoubt = record.steps.filter((s) => s.status === "InDoubt").map((s) => s.name);
    cell(row, record.processState === "Processing" ? "Processing, past its deadline" : record.processState);
    cell(row, record.updatedAt);
    const cause = record.lastError ? `${record.lastError.code}: ${record.lastError.message}` : "";
    cell(row, cause + (inDoubt.length ? ` (in doubt: ${inDoubt.join(", ")})` : ""));
    body.appendChild(row);
  }
  $("attention-empty").hidden = rows.length > 0;
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
    () => $("detail-title").scrollIntoView(),
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

function start() {
  $("resubmit").addEventListener("click", () => ask("resubmit"));
  $("compensate").addEventListener("click", () => ask("compensate"));
  $("confirm-cancel").addEventListener("click", () => $("confirm").close());
  $("confirm-form").addEventListener("submit", (event) => void confirm(event));
  startPartnerPanel();
  refresh();
  setInterval(refresh, 2000);
}

// index.html adds this script to its head, which may run it before the body is parsed.
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
