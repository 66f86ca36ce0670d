/*
 * The operator's console over the orders API, one view at a time at its own address (router.js): the
 * overview (overview.js), the orders with filters (orders.js), one order (order.js), the partner and its
 * circuit breakers (partner.js, breakers.js). Back and forward move between views; an address can be
 * shared and opened cold. The stats are read every two seconds whichever view is shown (the header's
 * figures, and the samples the overview's charts draw), and the view shown is refreshed with them. No
 * framework and no build step: ES modules, plain DOM code, every value written as text. Loaded as a
 * module by index.html, which gives every module's import the function key the page was opened with.
 */
import { getJson, readWith } from "./api.js";
import * as breakers from "./breakers.js";
import { startCommands } from "./commands.js";
import { $, zoneName } from "./format.js";
import * as order from "./order.js";
import * as orders from "./orders.js";
import * as overview from "./overview.js";
import * as partner from "./partner.js";
import { onRoute, orderHref } from "./router.js";

const REFRESH_MS = 2_000;
const TITLES = { overview: "Overview", orders: "Orders", partner: "Partner", missing: "No such view" };
/** The host's clock at its last reading, and this browser's clock then: bars and countdowns use it. */
const host = { at: null, readAt: Date.now() };
let stats = null;
let route = null;
let first = true;

function hostNow() {
  return host.at === null ? Date.now() : host.at + (Date.now() - host.readAt);
}

function show(next) {
  route = next;
  for (const section of document.querySelectorAll("main > .view")) {
    section.hidden = section.id !== `view-${route.view}`;
  }
  for (const link of document.querySelectorAll("header nav a")) {
    const current =
      link.dataset.view === route.view || (link.dataset.view === "orders" && route.view === "order");
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const title = route.view === "order" ? `Order ${route.orderId}` : TITLES[route.view];
  document.title = `${title} · Orders · Scheduler Agent Supervisor`;
  if (route.view === "orders") orders.show(route);
  if (route.view === "order") order.show(route);
  // Before the first reading of the stats, the first refresh reads the view after it.
  if (stats) {
    drawView();
    void refreshView().catch((error) => ($("error").textContent = error.message));
  }
  // After a move, the keyboard starts from the view's heading; the first view keeps the page's start.
  if (!first) document.querySelector(`#view-${route.view} [tabindex="-1"]`)?.focus();
  first = false;
}

/** Draws the view shown from the latest stats. */
function drawView() {
  if (route.view === "overview") overview.draw(stats);
  if (route.view === "partner") breakers.showBreakers(stats.breakers, hostNow());
}

/** What the view shown reads besides the stats. */
async function refreshView() {
  if (route.view === "order") await order.refresh(hostNow());
  if (route.view === "partner") await partner.refreshPartner();
}

/**
 * The host's clock when it answered: the latest instant the stats carry. `throughput.until` may be a
 * reading the host reused for a few seconds; the oldest Pending order's age is counted at each answer.
 */
function hostClock(stats) {
  const instants = [Date.parse(stats.throughput.until)];
  const oldest = stats.oldestPending;
  if (oldest) instants.push(Date.parse(oldest.since) + oldest.ageMs);
  return Math.max(...instants);
}

async function refreshStats() {
  // The first reading, asked for by index.html while the modules loaded, is taken up once.
  const asked = window.firstStats;
  window.firstStats = undefined;
  stats = await getJson("/api/stats", asked);
  // A reused reading does not take the clock back: the last estimate, moved on by this browser's clock, stands.
  const at = host.at === null ? hostClock(stats) : Math.max(hostClock(stats), hostNow());
  host.at = at;
  host.readAt = Date.now();
  $("inflight").textContent = `In flight: ${stats.inFlight.processing} of ${stats.inFlight.max}`;
  overview.sample(stats, Date.parse(stats.throughput.until));
  orders.setCounts(stats.counts);
  drawView();
}

async function refresh() {
  try {
    // The stats first: the host's clock they carry ends an order's running bars.
    await refreshStats();
    await refreshView();
    $("error").textContent = "";
  } catch (error) {
    $("error").textContent = `Could not refresh: ${error.message}`;
  }
}

/** Every second: the countdowns (the partner's outage, the breakers' next probes). */
function tick() {
  if (route?.view !== "partner") return;
  partner.showCountdown();
  if (stats) breakers.showBreakers(stats.breakers, hostNow());
}

function search(event) {
  event.preventDefault();
  const orderId = $("search-id").value.trim();
  if (!orderId) return;
  location.hash = orderHref(orderId);
}

function start() {
  // In Azure the host asks every request for the function key the page was opened with.
  const code = new URLSearchParams(location.search).get("code");
  readWith(code ? { "x-functions-key": code } : {});
  $("zone").textContent = `Times in ${zoneName()}; hover one for UTC.`;
  $("search-form").addEventListener("submit", search);
  startCommands();
  orders.startOrders();
  order.startOrder(refresh);
  partner.startPartnerPanel();
  onRoute(show);
  refresh().then(() => {
    // When the first reading is on the page: what the page's load time is measured by.
    document.documentElement.dataset.drawnAtMs = String(Math.round(performance.now()));
  });
  setInterval(refresh, REFRESH_MS);
  setInterval(tick, 1_000);
}

// index.html adds this script to its head, which may run it before the body is parsed.
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
