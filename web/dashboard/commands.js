/*
 * The operator's commands on one order (POST /api/orders/{id}/resubmit and /compensate): a dialog asks
 * who, why and, where the host needs one, the admin key or API token; a refusal is shown with its reason.
 */
import { commandHeaders, refusal, request } from "./api.js";
import { $ } from "./format.js";

const NAMES = { resubmit: "Resubmit", compensate: "Compensate" };
let pending = null;

/** Opens the dialog for `command` on `orderId`; `done` runs once the host has taken it. */
export function ask(command, orderId, done) {
  pending = { command, orderId, done };
  $("confirm-title").textContent = `${NAMES[command]} ${orderId}?`;
  $("confirm-error").textContent = "";
  $("confirm").showModal();
  $("operator").focus();
}

async function confirm(event) {
  event.preventDefault();
  if (!pending) return;
  const { command, orderId, done } = pending;
  const answer = await request(`/api/orders/${encodeURIComponent(orderId)}/${command}`, {
    method: "POST",
    headers: commandHeaders($("secret").value),
    body: JSON.stringify({ operator: $("operator").value, reason: $("reason").value }),
  });
  if (answer.status !== 202) {
    $("confirm-error").textContent = refusal(answer.status, answer.body);
    return;
  }
  pending = null;
  $("confirm").close();
  await done();
}

export function startCommands() {
  $("confirm-cancel").addEventListener("click", () => $("confirm").close());
  $("confirm-form").addEventListener("submit", (event) => void confirm(event));
}
