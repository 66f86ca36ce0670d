/*
 * The console's calls to the orders API. In Azure the page was opened with a function key (?code=),
 * which every read sends (dashboard.js hands it here); a command sends the admin key (Functions host)
 * or the API token (embedded host) that the operator typed.
 */
let readHeaders = {};

/** The headers every read sends from now on. */
export function readWith(headers) {
  readHeaders = headers;
}

/**
 * The answer's JSON; throws, naming the path and the status, when it is not a 2xx. `asked`: the
 * request, when it was already sent.
 */
export async function getJson(path, asked = fetch(path, { headers: readHeaders })) {
  const response = await asked;
  if (!response.ok) throw new Error(`${path} answered ${response.status}`);
  return response.json();
}

/** The status and the JSON body (an empty object when there is none), whatever the status. */
export async function request(path, init = {}) {
  const response = await fetch(path, { headers: readHeaders, ...init });
  const body = await response.json().catch(() => ({}));
  return { status: response.status, body };
}

/** A command's headers: the admin key for the Functions host, or the embedded host's API token. */
export function commandHeaders(secret) {
  const headers = { "Content-Type": "application/json" };
  if (secret) {
    headers["x-functions-key"] = secret;
    headers.Authorization = `Bearer ${secret}`;
  }
  return headers;
}

/** A refused request as the page shows it: the status, then the host's reason. */
export function refusal(status, answer) {
  const issues = (answer.issues || []).map((i) => `${i.field}: ${i.message}`).join("; ");
  const reason = [answer.error, answer.message || issues].filter(Boolean).join(": ");
  return `${status}${reason ? ` ${reason}` : ""}`;
}
