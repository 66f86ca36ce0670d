/*
 * The operator's dashboard over the orders API: it counts the orders per state and the attempts in
 * flight, shows the rest of GET /api/stats (the oldest Pending order's wait, dead-lettered and parked
 * messages, the Supervisor's last scan, orders finished per minute), lists the orders that need
 * attention (Error, CompensationFailed, Processing past their deadline), shows one order's timeline
 * from its history, and resubmits or compensates it after asking who and why. No framework and no
 * build step: plain DOM code, every value written as text. In Azure the page passes on the function key
 * it was opened with (?code=), and asks for the admin key (or, on the embedded host, the API token)
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

async function confirm(event) {
  event.preventDefault();
  const headers = { "Content-Type": "application/json" };
  const secret = $("secret").value;
  if (secret) {
    headers["x-functions-key"] = secret;
    headers.Authorization = `Bearer ${secret}`;
  }
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

function start() {
  $("resubmit").addEventListener("click", () => ask("resubmit"));
  $("compensate").addEventListener("click", () => ask("compensate"));
  $("confirm-cancel").addEventListener("click", () => $("confirm").close());
  $("confirm-form").addEventListener("submit", (event) => void confirm(event));
  refresh();
  setInterval(refresh, 2000);
}

// index.html adds this script to its head, which may run it before the body is parsed.
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
