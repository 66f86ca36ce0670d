/**
 * The operator's dashboard: one self-contained page over the orders API, served at `GET /` by the
 * embedded host and at `GET /api/dashboard` by the Functions app. It counts the orders per state and
 * the attempts in flight, shows the rest of `GET /api/stats` (the oldest `Pending` order's wait,
 * dead-lettered and parked messages, the Supervisor's last scan, orders finished per minute), lists
 * the orders that need attention (`Error`, `CompensationFailed`,
 * `Processing` past their deadline), shows one order's timeline from its history, and resubmits or
 * compensates it after asking who and why. No framework and no build step: plain DOM code, every value
 * written as text. In Azure the page passes on the function key it was opened with (`?code=`), and
 * asks for the admin key (or, on the embedded host, the API token) with each command.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Orders · Scheduler Agent Supervisor</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1b1b1b; }
  h1 { margin: 0 0 .25rem; font-size: 1.4rem; }
  h2 { font-size: 1.1rem; margin: 1.25rem 0 .5rem; }
  #counts { display: flex; flex-wrap: wrap; gap: .5rem; list-style: none; padding: 0; margin: 0; }
  #counts li { border: 1px solid #bbb; border-radius: 6px; padding: .35rem .7rem; min-width: 7rem; }
  #counts li b { display: block; font-size: 1.3rem; }
  table { border-collapse: collapse; }
  th, td { text-align: left; padding: .25rem .75rem .25rem 0; border-bottom: 1px solid #ddd; }
  button { font: inherit; padding: .25rem .6rem; }
  button:focus-visible, input:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 1px; }
  #timeline li { margin: .15rem 0; }
  #health { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
  #health dt { font-weight: 600; }
  #health dd { margin: 0; }
  .muted { color: #555; }
  dialog label { display: block; margin: .5rem 0; }
  dialog input { display: block; width: 20rem; }
  [role=alert] { color: #a40000; }
</style>
</head>
<body>
<header>
  <h1>Orders</h1>
  <p id="inflight" class="muted" aria-live="polite">Loading…</p>
</header>
<main>
  <section aria-labelledby="counts-title">
    <h2 id="counts-title">By state</h2>
    <ul id="counts"></ul>
  </section>
  <section aria-labelledby="health-title">
    <h2 id="health-title">Health</h2>
    <dl id="health">
      <dt>Oldest Pending</dt><dd id="oldest-pending"></dd>
      <dt>Dead-lettered</dt><dd id="dead-lettered"></dd>
      <dt>Parked</dt><dd id="parked"></dd>
      <dt>Last Supervisor scan</dt><dd id="last-scan"></dd>
      <dt>Finished per minute</dt><dd id="throughput"></dd>
      <dt>Workflow versions</dt><dd id="workflow-versions"></dd>
    </dl>
  </section>
  <section aria-labelledby="attention-title">
    <h2 id="attention-title">Needing attention</h2>
    <table>
      <thead><tr><th scope="col">Order</th><th scope="col">State</th><th scope="col">Changed</th><th scope="col">Cause</th></tr></thead>
      <tbody id="attention"></tbody>
    </table>
    <p id="attention-empty" class="muted" hidden>Nothing needs attention.</p>
  </section>
  <section id="detail" aria-labelledby="detail-title" hidden>
    <h2 id="detail-title">Order <span id="detail-id"></span></h2>
    <p id="detail-state"></p>
    <ol id="timeline"></ol>
    <p>
      <button type="button" id="resubmit">Resubmit…</button>
      <button type="button" id="compensate">Compensate…</button>
    </p>
  </section>
  <p id="error" role="alert"></p>
</main>
<dialog id="confirm" aria-labelledby="confirm-title">
  <form id="confirm-form" method="dialog">
    <h2 id="confirm-title"></h2>
    <label>Operator <input id="operator" name="operator" required maxlength="128" autocomplete="username"></label>
    <label>Reason <input id="reason" name="reason" required maxlength="1000"></label>
    <label>Admin key or API token, if the host needs one <input id="secret" name="secret" type="password" autocomplete="off"></label>
    <p id="confirm-error" role="alert"></p>
    <button type="button" id="confirm-cancel">Cancel</button>
    <button type="submit" id="confirm-go">Confirm</button>
  </form>
</dialog>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  const code = new URLSearchParams(location.search).get("code");
  const readHeaders = code ? { "x-functions-key": code } : {};
  let selected = null;
  let pendingCommand = null;

  async function getJson(path) {
    const response = await fetch(path, { headers: readHeaders });
    if (!response.ok) throw new Error(path + " answered " + response.status);
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
    $("inflight").textContent = "In flight: " + stats.inFlight.processing + " of " + stats.inFlight.max;
    showHealth(stats);
  }

  function age(ms) {
    const s = Math.floor(ms / 1000);
    if (s >= 3600) return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
    return s >= 60 ? Math.floor(s / 60) + "m " + (s % 60) + "s" : s + "s";
  }

  function counted(n) {
    return n.count + (n.capped ? "+" : "");
  }

  function showHealth(stats) {
    const missing = (figure) => stats.unavailable.includes(figure) ? "Unavailable: the host could not read it." : null;
    const oldest = stats.oldestPending;
    $("oldest-pending").textContent = oldest
      ? oldest.orderId + ", waiting " + age(oldest.ageMs) + " (since " + oldest.since + ")"
      : "Nothing is Pending.";
    const m = stats.messages;
    $("dead-lettered").textContent = missing("messages") ||
      Object.entries(m.deadLettered).map(([queue, n]) => queue + " " + counted(n)).join(" · ") +
      " (counted up to " + m.countedUpTo + " per queue, at " + m.countedAt + ")";
    $("parked").textContent = missing("messages") || counted(m.parked) + " refused with a reason";
    const scan = stats.lastScan;
    const found = scan && scan.found;
    $("last-scan").textContent = missing("lastScan") || (scan
      ? scan.finishedAt + " by " + scan.holder + ": scanned " + found.scanned + ", reset " + found.resets +
        ", to Error " + found.toError + ", to compensation " + found.toCompensation + ", stalled " + found.stalled +
        ", lost races " + found.lostRaces + (found.truncated ? ", truncated" : "") + (found.leaseLost ? ", lease lost" : "") +
        "; " + scan.cost.pages + " page(s), " + scan.cost.requestUnits + " RU, " + Math.round(scan.cost.durationMs) + " ms"
      : "No scan recorded yet.");
    const t = stats.throughput;
    $("throughput").textContent = t.finishedPerMinute.join(" · ") + " (oldest first, the last minute up to " + t.until +
      "; " + t.perSecondLastMinute + " per second)";
    const w = stats.workflowVersions;
    $("workflow-versions").textContent = Object.entries(w.byVersion).map(([version, use]) =>
      "v" + version + (Number(version) === w.default ? " (new orders)" : "") + ": " + use.inFlight +
      " in flight, " + use.awaitingOperator + " awaiting an operator").join(" · ");
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
      button.setAttribute("aria-label", "Show order " + record.orderId);
      button.addEventListener("click", () => select(record.orderId));
      cell(row, "").appendChild(button);
      const inDoubt = record.steps.filter((s) => s.status === "InDoubt").map((s) => s.name);
      cell(row, record.processState === "Processing" ? "Processing, past its deadline" : record.processState);
      cell(row, record.updatedAt);
      const cause = record.lastError ? record.lastError.code + ": " + record.lastError.message : "";
      cell(row, cause + (inDoubt.length ? " (in doubt: " + inDoubt.join(", ") + ")" : ""));
      body.appendChild(row);
    }
    $("attention-empty").hidden = rows.length > 0;
  }

  async function refreshDetail() {
    if (!selected) return;
    const [record, history] = await Promise.all([
      getJson("/api/orders/" + encodeURIComponent(selected)),
      getJson("/api/orders/" + encodeURIComponent(selected) + "/history"),
    ]);
    $("detail").hidden = false;
    $("detail-id").textContent = record.orderId;
    $("detail-state").textContent =
      record.processState + " · workflow v" + record.workflowVersion + " · attempt " + record.attempt + " · steps: " +
      record.steps.map((s) => s.name + " " + s.status).join(", ");
    const list = $("timeline");
    list.replaceChildren();
    if (history.earlier) {
      const li = document.createElement("li");
      li.textContent = history.earlier.entries + " earlier transitions, " + history.earlier.since + " to " + history.earlier.until;
      list.appendChild(li);
    }
    for (const e of history.entries) {
      const li = document.createElement("li");
      li.textContent = e.at + " · attempt " + e.attempt + " · " + e.actor + " " + e.command + ": " + e.from + " → " + e.to +
        (e.step ? " · " + e.step : "") + (e.code ? " · " + e.code : "");
      list.appendChild(li);
    }
  }

  async function refresh() {
    try {
      await Promise.all([refreshCounts(), refreshAttention(), refreshDetail()]);
      $("error").textContent = "";
    } catch (error) {
      $("error").textContent = "Could not refresh: " + error.message;
    }
  }

  function select(orderId) {
    selected = orderId;
    refreshDetail().then(() => $("detail-title").scrollIntoView(), (error) => ($("error").textContent = error.message));
  }

  function ask(command) {
    pendingCommand = command;
    $("confirm-title").textContent = (command === "resubmit" ? "Resubmit " : "Compensate ") + selected + "?";
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
      headers.Authorization = "Bearer " + secret;
    }
    const response = await fetch("/api/orders/" + encodeURIComponent(selected) + "/" + pendingCommand, {
      method: "POST",
      headers,
      body: JSON.stringify({ operator: $("operator").value, reason: $("reason").value }),
    });
    const answer = await response.json().catch(() => ({}));
    if (response.status !== 202) {
      const issues = (answer.issues || []).map((i) => i.field + ": " + i.message).join("; ");
      $("confirm-error").textContent = response.status + " " + (answer.message || issues || answer.error || "");
      return;
    }
    $("confirm").close();
    await refresh();
  }

  $("resubmit").addEventListener("click", () => ask("resubmit"));
  $("compensate").addEventListener("click", () => ask("compensate"));
  $("confirm-cancel").addEventListener("click", () => $("confirm").close());
  $("confirm-form").addEventListener("submit", (event) => void confirm(event));
  refresh();
  setInterval(refresh, 2000);
})();
</script>
</body>
</html>
`;
