/*
 * The orders (`#/orders`): filtered by state (or the orders needing attention: Error, CompensationFailed,
 * Processing past its deadline), newest change first, page by page with the API's continuation. Each
 * order's id links to its own address. A page is read when it is opened (and on "Read again"), not at
 * every refresh, so the list holds still while it is read.
 */
import { getJson } from "./api.js";
import { $, cell, phrase } from "./format.js";
import { go, orderHref, ordersHref } from "./router.js";

const STATES = [
  "Pending",
  "Processing",
  "Processed",
  "Error",
  "Compensating",
  "Compensated",
  "CompensationFailed",
];
/** The list shown: its route, the continuation tokens of the pages before the one shown, the next. */
let shown = { key: null, route: null, tokens: [null], next: null };
let counts = {};

/** The filters' counts, from the latest reading of the stats. */
export function setCounts(byState) {
  counts = { ...byState, "": Object.values(byState).reduce((a, b) => a + b, 0) };
  if (shown.route) showFilters(shown.route);
}

/** Shows the list a route names; a list already shown with the same filter keeps its page. */
export function show(route) {
  const key = ordersHref(route);
  $("back-to-list").href = key;
  $("browse-limit").value = route.limit;
  showFilters(route);
  if (shown.key === key) return;
  shown = { key, route, tokens: [null], next: null };
  void read();
}

function showFilters(route) {
  const links = [
    ["", "Any state", ordersHref({ limit: route.limit })],
    ...STATES.map((state) => [state, state, ordersHref({ state, limit: route.limit })]),
    ["attention", "Needing attention", ordersHref({ needs: "attention", limit: route.limit })],
  ];
  const current = route.needs === "attention" ? "attention" : route.state;
  $("filters").replaceChildren(
    ...links.map(([value, name, href]) => {
      const link = document.createElement("a");
      link.href = href;
      link.className = "chip";
      link.dataset.filter = value || "any";
      link.textContent = name;
      if (counts[value] !== undefined) {
        const n = document.createElement("span");
        n.className = "count";
        n.textContent = String(counts[value]);
        link.append(" ", n);
      }
      if (value === current) link.setAttribute("aria-current", "page");
      return link;
    }),
  );
}

/** Reads the page shown and draws it; says why when it cannot. */
async function read() {
  const { route, key } = shown;
  $("browse-read").textContent = "Reading…";
  try {
    const page = route.needs === "attention" ? await attention() : await listPage(route);
    if (shown.key !== key) return;
    draw(route, page);
  } catch (error) {
    $("browse-page").textContent = `Could not list: ${error.message}`;
    $("browse-read").textContent = "";
  }
}

async function listPage(route) {
  const query = new URLSearchParams({ limit: route.limit });
  if (route.state) query.set("state", route.state);
  const token = shown.tokens.at(-1);
  if (token) query.set("continuation", token);
  const page = await getJson(`/api/orders?${query}`);
  return { items: page.items.map((r) => [r, r.processState]), continuation: page.continuation };
}

/** The orders needing attention: those that failed, then those past their deadline. One page. */
async function attention() {
  const [errors, failed, processing] = await Promise.all([
    getJson("/api/orders?state=Error&limit=50"),
    getJson("/api/orders?state=CompensationFailed&limit=50"),
    getJson("/api/orders?state=Processing&limit=200"),
  ]);
  const now = new Date().toISOString();
  const late = processing.items.filter((r) => r.completeBy !== null && r.completeBy < now);
  return {
    items: [
      ...failed.items.map((r) => [r, r.processState]),
      ...errors.items.map((r) => [r, r.processState]),
      ...late.map((r) => [r, "Processing, past its deadline"]),
    ],
    continuation: null,
  };
}

function draw(route, page) {
  $("browse").replaceChildren(...page.items.map(([record, state]) => orderRow(record, state)));
  $("browse-table").hidden = page.items.length === 0;
  shown.next = page.continuation;
  const number = shown.tokens.length;
  const what = route.needs === "attention" ? " needing attention" : route.state ? ` in ${route.state}` : "";
  const paged = route.needs !== "attention";
  $("browse-page").textContent =
    page.items.length === 0
      ? `${paged ? `Page ${number}: no` : "No"} orders${what}.`
      : paged
        ? `Page ${number}: ${page.items.length} order(s)${what}${page.continuation ? "" : ", the last page"}.`
        : `${page.items.length} order(s)${what}.`;
  for (const id of ["browse-first", "browse-prev", "browse-next"]) $(id).hidden = !paged;
  $("browse-next").disabled = !page.continuation;
  $("browse-prev").disabled = number === 1;
  $("browse-first").disabled = number === 1;
  $("browse-read").replaceChildren(...phrase("Read at ", { at: Date.now() }, "."));
}

/** A row of the list: its id as the link to its address, its state, last change, attempt and cause. */
function orderRow(record, state) {
  const row = document.createElement("tr");
  row.dataset.orderId = record.orderId;
  const link = document.createElement("a");
  link.href = orderHref(record.orderId);
  link.textContent = record.orderId;
  link.setAttribute("aria-label", `Show order ${record.orderId}`);
  cell(row, link);
  cell(row, state);
  cell(row, phrase({ at: record.updatedAt }));
  cell(row, String(record.attempt));
  const inDoubt = record.steps.filter((s) => s.status === "InDoubt").map((s) => s.name);
  const cause = record.lastError ? `${record.lastError.code}: ${record.lastError.message}` : "";
  cell(row, cause + (inDoubt.length ? ` (in doubt: ${inDoubt.join(", ")})` : ""));
  return row;
}

function page(move) {
  if (move === "first") shown.tokens = [null];
  if (move === "next" && shown.next) shown.tokens.push(shown.next);
  if (move === "previous" && shown.tokens.length > 1) shown.tokens.pop();
  void read();
}

export function startOrders() {
  $("browse-form").addEventListener("submit", (event) => event.preventDefault());
  $("browse-limit").addEventListener("change", () => {
    const { state, needs } = shown.route || {};
    go(ordersHref({ state, needs, limit: $("browse-limit").value }));
  });
  $("browse-reload").addEventListener("click", () => page("current"));
  $("browse-first").addEventListener("click", () => page("first"));
  $("browse-prev").addEventListener("click", () => page("previous"));
  $("browse-next").addEventListener("click", () => page("next"));
}
