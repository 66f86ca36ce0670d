/*
 * The console's addresses, in the page's hash, since the same files are served at different paths by
 * the two hosts (`/` on the embedded host, `/api/dashboard?code=…` on the Functions host) and the
 * hash leaves the path and the key's query alone:
 *
 *   #/                              the overview
 *   #/orders?state=Error&limit=25   the orders, filtered (`needs=attention`: Error, CompensationFailed,
 *                                   Processing past its deadline)
 *   #/orders/<order id>             one order (its id URL-encoded)
 *   #/partner                       the partner and its circuit breakers
 *
 * Pure but for `onRoute`, so the addresses can be tested on their own.
 */
export const LIMITS = ["25", "50", "100"];

/** The view an address names, with its parameters; `missing` for one that names none. */
export function parseRoute(hash) {
  const [path, query = ""] = hash.replace(/^#/, "").split(/\?(.*)/s);
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean);
  if (parts.length === 0) return { view: "overview" };
  if (parts[0] === "partner" && parts.length === 1) return { view: "partner" };
  if (parts[0] !== "orders") return { view: "missing" };
  if (parts.length === 2) {
    try {
      return { view: "order", orderId: decodeURIComponent(parts[1]) };
    } catch {
      return { view: "missing" };
    }
  }
  if (parts.length > 2) return { view: "missing" };
  const limit = LIMITS.includes(params.get("limit")) ? params.get("limit") : LIMITS[0];
  if (params.get("needs") === "attention") return { view: "orders", needs: "attention", state: "", limit };
  return { view: "orders", needs: "", state: params.get("state") || "", limit };
}

export function overviewHref() {
  return "#/";
}

/** The orders' address: a state (or all), or the orders needing attention, and the page's size. */
export function ordersHref({ state = "", needs = "", limit = LIMITS[0] } = {}) {
  const query = new URLSearchParams();
  if (needs) query.set("needs", needs);
  else if (state) query.set("state", state);
  if (limit !== LIMITS[0]) query.set("limit", limit);
  const text = query.toString();
  return `#/orders${text ? `?${text}` : ""}`;
}

export function orderHref(orderId) {
  return `#/orders/${encodeURIComponent(orderId)}`;
}

export function partnerHref() {
  return "#/partner";
}

/** Calls `show` with the address's route now and after each change (a link, back, forward). */
export function onRoute(show) {
  window.addEventListener("hashchange", () => show(parseRoute(location.hash)));
  show(parseRoute(location.hash));
}

/** Goes to an address, as a link would: a new entry in the history. */
export function go(href) {
  if (location.hash === href) return;
  location.hash = href;
}
