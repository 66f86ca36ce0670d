/*
 * The partner's panel (the Partner view): the simulated partner's fault rates, a running outage with a
 * countdown, and the recent control changes (GET /api/partner); it sets the rates, takes the partner
 * down or brings it back with the admin key or API token typed in the panel. A real partner has no
 * controls (404 `no-partner-controls`), and the panel says so.
 */
import { commandHeaders, refusal, request } from "./api.js";
import { $, age, cell, phrase } from "./format.js";

const RATES = ["transient", "permanent", "slow", "lostReply"];
const RATE_NAMES = { transient: "transient", permanent: "permanent", slow: "slow", lostReply: "lost reply" };
const CHANGE_NAMES = { faults: "Fault rates set", outage: "Taken down", recovered: "Brought back" };
/** Once the operator edits a rate, the refreshes stop overwriting the form until it is sent. */
let ratesEdited = false;
let outageUntil = null;
/** Counts the commands answered, so that a read started before one does not show the older state after it. */
let commandsAnswered = 0;
let commandRunning = false;
/** The status last written, so that a screen reader hears the live status once. */
let statusShown = null;

function setStatus(key, ...parts) {
  if (statusShown === key) return;
  statusShown = key;
  $("partner-status").replaceChildren(...phrase(...parts));
}

/** The partner's state, or why it cannot be shown; never throws, so the rest of the page refreshes on. */
export async function refreshPartner() {
  const before = commandsAnswered;
  let answer;
  try {
    answer = await request("/api/partner");
  } catch (error) {
    setStatus(`error ${error.message}`, `Could not read the partner: ${error.message}`);
    return;
  }
  if (before !== commandsAnswered || commandRunning) return;
  if (answer.status === 200) showPartner(answer.body);
  else if (!showNoControls(answer.status, answer.body)) {
    const text = `Could not read the partner: ${refusal(answer.status, answer.body)}`;
    setStatus(text, text);
  }
}

/** A real partner has no control API: the panel says so and offers no controls. */
function showNoControls(status, answer) {
  if (status !== 404 || answer.error !== "no-partner-controls") return false;
  $("partner-controls").hidden = true;
  $("partner-countdown").hidden = true;
  outageUntil = null;
  const text =
    `This partner has no controls: its fault rates and outages cannot be set from here. ${answer.message || ""}`.trim();
  setStatus(text, text);
  return true;
}

function showPartner(state) {
  $("partner-controls").hidden = false;
  outageUntil = state.outage ? state.outage.until : null;
  if (state.outage) {
    const { since, until } = state.outage;
    setStatus(
      `down ${since} ${until}`,
      "Down since ",
      { at: since },
      ": every call is refused until ",
      { at: until },
      ".",
    );
  } else {
    const text = `Up: calls are answered, with the fault rates below (slow calls wait ${state.slowMs} ms).`;
    setStatus(text, text);
  }
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
    cell(row, phrase({ at: change.at }));
    cell(row, CHANGE_NAMES[change.change] || change.change);
    cell(row, change.by);
    cell(row, describeChange(change));
    body.appendChild(row);
  }
  $("partner-changes-table").hidden = state.changes.length === 0;
  $("partner-changes-empty").hidden = state.changes.length > 0;
}

function describeChange(change) {
  if (change.change === "faults" && change.faults) {
    return RATES.map((rate) => `${RATE_NAMES[rate]} ${change.faults[rate]}`).join(", ");
  }
  return change.change === "outage" && change.until ? phrase("until ", { at: change.until }) : "";
}

/** The seconds left of a running outage, by this browser's clock, updated every second. */
export function showCountdown() {
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
    const answer = await request(path, {
      method,
      headers: commandHeaders($("partner-secret").value),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    commandsAnswered += 1;
    if (answer.status === 200) {
      showPartner(answer.body);
      return true;
    }
    if (!showNoControls(answer.status, answer.body)) {
      $("partner-error").textContent = `Refused: ${refusal(answer.status, answer.body)}`;
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
  if (await partnerCommand("POST", "/api/partner/faults", faults)) ratesEdited = false;
}

function takeDown(event) {
  event.preventDefault();
  void partnerCommand("POST", "/api/partner/outage", { seconds: Number($("outage-seconds").value) });
}

function nameTakeDown() {
  const seconds = $("outage-seconds").value;
  $("partner-take-down").textContent = `Take the partner down for ${seconds || "N"} seconds`;
}

/** Wires the panel's forms; the console refreshes it while the Partner view is shown. */
export function startPartnerPanel() {
  $("partner-secret-form").addEventListener("submit", (event) => event.preventDefault());
  $("partner-faults-form").addEventListener("input", () => (ratesEdited = true));
  $("partner-faults-form").addEventListener("submit", (event) => void setFaults(event));
  $("partner-outage-form").addEventListener("submit", takeDown);
  $("outage-seconds").addEventListener("input", nameTakeDown);
  $("partner-recover").addEventListener("click", () => partnerCommand("DELETE", "/api/partner/outage"));
}
