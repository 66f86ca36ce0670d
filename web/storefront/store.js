/*
 * The storefront's page: the catalogue, a cart, checkout, one order followed live over server-sent
 * events, and the orders placed in this browser (their ids in localStorage, their details from the API).
 * Views are chosen by the address's hash: #/ the shop, #/orders the list, #/orders/{id} one order.
 * No framework and no build step: plain DOM code, every value written as text. Loaded as a module.
 * When the storefront refuses something (too many orders, too many live views), the page shows the
 * reason it gave. Times are the viewer's, each a <time> carrying its UTC instant (shown on hover).
 */
const $ = (id) => document.getElementById(id);
const ORDERS_KEY = "storefront.orders";
const CART_KEY = "storefront.cart";
const FINAL = new Set(["Processed", "Error", "Compensated", "CompensationFailed"]);
const FAILED = new Set(["Error", "Compensated", "CompensationFailed", "Compensating"]);
/** How long to wait before following an order again after its stream ended or was cut off. */
const RETRY_MS = 2_000;
const DELIVERY_EXPLANATIONS = {
  sending:
    "Placed. The Scheduler's queue has not confirmed it yet; the shop keeps sending it, and it is taken once.",
  notSent:
    "The shop could not get this order to the Scheduler and stopped trying. Unless a status appears below, it was not taken and nothing was charged.",
};
const EXPLANATIONS = {
  Submitted: "Sent to the Scheduler; waiting for it to confirm.",
  Pending: "The Scheduler has your order and will start on it shortly.",
  Processing: "Reserving stock, taking payment and arranging shipment.",
  Processed: "Done: your order is on its way.",
  Error: "The order could not be completed, and nothing was charged or shipped.",
  Compensating: "A step failed; the steps already done are being undone.",
  Compensated: "A step failed; everything done for the order has been undone.",
  CompensationFailed: "A step failed and undoing it did not finish; our staff will sort it out.",
};
const STATUS_WORDS = {
  received: "Received",
  processing: "Processing",
  completed: "Completed",
  failed: "Failed",
  compensating: "Undoing completed steps",
  compensated: "Undone",
  compensationFailed: "Undoing failed",
};

let catalogue = null;
let cart = readJson(sessionStorage, CART_KEY, {});
let following = null;

function readJson(storage, key, fallback) {
  try {
    return JSON.parse(storage.getItem(key) ?? "") ?? fallback;
  } catch {
    return fallback;
  }
}

function money(minor, currency) {
  return new Intl.NumberFormat("en", { style: "currency", currency }).format(minor / 100);
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

const pad = (n, width = 2) => String(n).padStart(width, "0");

function localDate(d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** A <time>: the instant in the viewer's zone ("HH:MM:SS", dated when not today), its UTC form on hover. */
function timeElement(iso) {
  const at = new Date(iso);
  const clock = `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
  const text = localDate(at) === localDate(new Date()) ? clock : `${localDate(at)} ${clock}`;
  const node = element("time", text);
  node.dateTime = at.toISOString();
  node.title = `${at.toISOString()} UTC`;
  return node;
}

/**
 * Says, under a list of times, which zone they are in: by name only, since an offset from UTC taken now
 * would be wrong for a time on the other side of a daylight-saving change.
 */
function showZoneNote(note, shown) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  note.textContent = /^(Etc\/)?UTC$/.test(zone)
    ? "Times are in UTC, your time zone."
    : `Times are in your time zone${zone ? ` (${zone})` : ""}; hover over one for UTC.`;
  note.hidden = !shown;
}

function cells(row, ...values) {
  for (const value of values) {
    const td = value instanceof Node ? element("td") : element("td", value);
    if (value instanceof Node) td.append(value);
    row.append(td);
  }
  return row;
}

async function getJson(path) {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error ?? `${path} answered ${response.status}`);
  return body;
}

/* The catalogue and the cart. */

async function loadCatalogue() {
  try {
    catalogue = await getJson("/api/catalogue");
  } catch (error) {
    $("catalogue-message").textContent = `The catalogue could not be loaded: ${error.message}`;
    return;
  }
  $("catalogue-message").textContent = "";
  $("catalogue-message").hidden = true;
  const list = $("products");
  list.replaceChildren();
  for (const product of catalogue.products) {
    const item = element("li", undefined, "product");
    const nameId = `product-${product.sku}`;
    const name = element("h3", product.name);
    name.id = nameId;
    const add = element("button", "Add to cart");
    add.type = "button";
    add.setAttribute("aria-describedby", nameId);
    add.addEventListener("click", () => addToCart(product.sku));
    item.append(
      name,
      element("p", product.description, "muted"),
      element("p", money(product.unitPriceMinor, catalogue.currency), "price"),
      add,
    );
    list.append(item);
  }
  for (const sku of Object.keys(cart)) if (!productOf(sku)) delete cart[sku];
  renderCart();
}

function productOf(sku) {
  return catalogue?.products.find((product) => product.sku === sku);
}

function addToCart(sku) {
  cart[sku] = Math.min(99, (cart[sku] ?? 0) + 1);
  saveCart();
  renderCart();
  $("cart-message").textContent = `${productOf(sku)?.name} added: ${cart[sku]} in your cart.`;
}

function saveCart() {
  sessionStorage.setItem(CART_KEY, JSON.stringify(cart));
}

function renderCart() {
  const body = $("cart-lines");
  body.replaceChildren();
  let total = 0;
  for (const [sku, quantity] of Object.entries(cart)) {
    const product = productOf(sku);
    if (!product) continue;
    total += product.unitPriceMinor * quantity;
    const input = element("input");
    input.type = "number";
    input.min = "1";
    input.max = "99";
    input.value = String(quantity);
    input.setAttribute("aria-label", `Quantity of ${product.name}`);
    input.addEventListener("change", () => {
      const value = Math.round(Number(input.value));
      cart[sku] = Number.isFinite(value) ? Math.min(99, Math.max(1, value)) : 1;
      saveCart();
      renderCart();
    });
    const remove = element("button", "Remove", "remove");
    remove.type = "button";
    remove.setAttribute("aria-label", `Remove ${product.name}`);
    remove.addEventListener("click", () => {
      delete cart[sku];
      saveCart();
      renderCart();
      $("place-order").focus();
    });
    // Remove under the name, not in a column of its own: three columns fit a 360 px phone.
    const name = element("div", product.name);
    name.append(remove);
    const row = cells(
      element("tr"),
      name,
      input,
      money(product.unitPriceMinor * quantity, catalogue.currency),
    );
    row.children[2].className = "amount";
    body.append(row);
  }
  const empty = body.children.length === 0;
  const count = Object.values(cart).reduce((sum, quantity) => sum + quantity, 0);
  $("cart-jump").textContent = empty
    ? "View your cart (empty)"
    : `View your cart (${count} ${count === 1 ? "item" : "items"}, ${money(total, catalogue.currency)})`;
  $("cart-empty").hidden = !empty;
  $("cart-table").hidden = empty;
  $("cart-total").textContent = catalogue ? money(total, catalogue.currency) : "";
  $("place-order").disabled = empty;
}

async function placeOrder() {
  const button = $("place-order");
  const items = Object.entries(cart).map(([sku, quantity]) => ({ sku, quantity }));
  button.disabled = true;
  $("checkout-error").textContent = "";
  try {
    const response = await fetch("/api/orders", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ items }),
    });
    const body = await response.json().catch(() => ({}));
    // A refusal's body says why (a 429 names the limit and when to try again): shown as it is.
    if (response.status !== 202) throw new Error(body.error ?? `the storefront answered ${response.status}`);
    remember(body.orderId);
    $("cart-message").textContent = "";
    cart = {};
    saveCart();
    renderCart();
    location.hash = `#/orders/${encodeURIComponent(body.orderId)}`;
  } catch (error) {
    $("checkout-error").textContent = `The order was not placed: ${error.message}`;
    button.disabled = false;
  }
}

function remember(orderId) {
  const ids = readJson(localStorage, ORDERS_KEY, []).filter((id) => id !== orderId);
  localStorage.setItem(ORDERS_KEY, JSON.stringify([orderId, ...ids].slice(0, 50)));
}

/* One order, followed live. */

function showOrder(orderId) {
  $("order-id").textContent = orderId;
  $("order-state").textContent = "Loading…";
  $("order-explain").textContent = "";
  showNotice("");
  $("order-lines").replaceChildren();
  $("timeline").replaceChildren();
  following = new AbortController();
  void followOrder(orderId, following.signal);
}

function closeStream() {
  following?.abort();
  following = null;
}

function showNotice(text) {
  $("order-notice").textContent = text;
  $("order-notice").hidden = text === "";
}

/**
 * Follows the order's event stream until the order is final. Read with fetch rather than EventSource,
 * which hides why a stream was refused: a refusal (429 or 503) is shown with its reason, the order is
 * read once meanwhile, and the stream is asked for again after the Retry-After the refusal gave.
 */
async function followOrder(orderId, signal) {
  const path = `/api/orders/${encodeURIComponent(orderId)}`;
  while (!signal.aborted) {
    let waitMs = RETRY_MS;
    try {
      const response = await fetch(`${path}/events`, { headers: { accept: "text/event-stream" }, signal });
      if (response.ok) {
        showNotice("");
        if (await readEvents(response)) return;
      } else {
        const body = await response.json().catch(() => ({}));
        const reason = body.error ?? `the storefront answered ${response.status}`;
        if (response.status !== 429 && response.status !== 503) {
          $("order-state").textContent =
            response.status === 404
              ? "This order could not be found here."
              : `This order cannot be shown: ${reason}`;
          return;
        }
        showNotice(`Live updates are paused: ${reason}`);
        waitMs = retryAfterMs(response);
        const order = await getJson(path);
        renderOrder(order);
        if (FINAL.has(order.state)) return;
      }
    } catch {
      if (signal.aborted) return;
    }
    await pause(waitMs, signal);
  }
}

/** Renders each `status` event of the stream; true once the order is final, false when the stream ends. */
async function readEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    buffer += value;
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const order = statusEventOf(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (!order) continue;
      renderOrder(order);
      if (FINAL.has(order.state)) {
        await reader.cancel();
        return true;
      }
    }
  }
}

/** The order an `event: status` block carries; null for any other block (a heartbeat, `retry:`). */
function statusEventOf(block) {
  const lines = block.split("\n");
  if (!lines.includes("event: status")) return null;
  const data = lines
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice(6))
    .join("\n");
  return data ? JSON.parse(data) : null;
}

function retryAfterMs(response) {
  const seconds = Number(response.headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1_000 : RETRY_MS;
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Who a step's partner is, in a shopper's words. */
const STEP_PARTIES = {
  reserveInventory: "The warehouse",
  chargePayment: "The payment service",
  arrangeShipment: "The carrier",
  notifyCustomer: "The notification service",
};

/**
 * What a status that starts another attempt tells the shopper. After a failed attempt the status's
 * detail names the step that did not finish ("retrying after <step> did not finish (...)", written by
 * src/domain/status-message.ts), so the shopper hears who did not answer; without it, only the attempt.
 */
function retryText(status) {
  if (status.status !== "processing" || status.attempt < 2) return null;
  const step = /^retrying after (\w+) did not finish/.exec(status.detail ?? "")?.[1];
  const party = step ? STEP_PARTIES[step] : undefined;
  if (party) return `${party} did not answer; trying again (attempt ${status.attempt}).`;
  const before = status.attempt === 2 ? "The first attempt" : `Attempt ${status.attempt - 1}`;
  return `${before} did not go through; trying again (attempt ${status.attempt}).`;
}

function explanationOf(order) {
  if (order.state === "Submitted") return DELIVERY_EXPLANATIONS[order.delivery] ?? "";
  const retry = order.state === "Processing" ? retryText(order.statuses.at(-1) ?? {}) : null;
  if (retry) return `${retry} Steps already done are not done again, and nothing is charged twice.`;
  return EXPLANATIONS[order.state] ?? "";
}

function stateText(order) {
  if (order.state === "Submitted" && order.delivery === "sending") return "Placed, sending";
  if (order.state === "Submitted" && order.delivery === "notSent") return "Not sent";
  return FAILED.has(order.state) && order.detail ? `${order.state}: ${order.detail}` : order.state;
}

function renderOrder(order) {
  const state = $("order-state");
  state.textContent = stateText(order);
  state.dataset.state = order.state;
  $("order-explain").textContent = explanationOf(order);
  const lines = $("order-lines");
  lines.replaceChildren();
  for (const item of order.items) {
    const row = cells(
      element("tr"),
      item.name,
      String(item.quantity),
      money(item.unitPriceMinor * item.quantity, order.currency),
    );
    row.children[1].className = "amount";
    row.children[2].className = "amount";
    lines.append(row);
  }
  $("order-total").textContent = money(order.totalMinor, order.currency);
  const timeline = $("timeline");
  timeline.replaceChildren();
  for (const status of order.statuses) {
    const item = element("li");
    item.append(
      element("strong", STATUS_WORDS[status.status] ?? status.status),
      " · ",
      timeElement(status.at),
    );
    if (status.attempt > 0) item.append(` · attempt ${status.attempt}`);
    const detail = retryText(status) || status.detail;
    if (detail) item.append(element("span", detail, "detail"));
    timeline.append(item);
  }
  $("timeline-empty").hidden = order.statuses.length > 0;
  showZoneNote(document.querySelector("#order-view .zone-note"), order.statuses.length > 0);
}

/* The orders placed in this browser. */

async function showOrders() {
  const ids = readJson(localStorage, ORDERS_KEY, []);
  const message = $("orders-message");
  const table = $("orders-table");
  table.hidden = true;
  showZoneNote(document.querySelector("#orders-view .zone-note"), false);
  if (ids.length === 0) {
    message.textContent = "You have not placed an order in this browser yet.";
    return;
  }
  message.textContent = "Loading…";
  let orders;
  try {
    ({ orders } = await getJson(`/api/orders?ids=${ids.map(encodeURIComponent).join(",")}`));
  } catch (error) {
    message.textContent = `Your orders could not be loaded: ${error.message}`;
    return;
  }
  const list = $("orders-list");
  list.replaceChildren();
  for (const order of orders) {
    const link = element("a", order.orderId);
    link.href = `#/orders/${encodeURIComponent(order.orderId)}`;
    list.append(
      cells(
        element("tr"),
        link,
        timeElement(order.placedAt),
        money(order.totalMinor, order.currency),
        stateText(order),
      ),
    );
  }
  message.textContent = orders.length === 0 ? "None of your orders is known here any more." : "";
  table.hidden = orders.length === 0;
  showZoneNote(document.querySelector("#orders-view .zone-note"), orders.length > 0);
}

/* Views. */

/** The view an address's hash names, or null for any other hash (the skip link's #main among them). */
function viewOf(hash) {
  if (hash === "" || hash === "#/") return { name: "shop" };
  if (hash === "#/orders") return { name: "orders" };
  const order = /^#\/orders\/(.+)$/.exec(hash);
  return order ? { name: "order", orderId: decodeURIComponent(order[1]) } : null;
}

function route() {
  const view = viewOf(location.hash);
  if (!view) return false;
  closeStream();
  $("shop-view").hidden = view.name !== "shop";
  $("order-view").hidden = view.name !== "order";
  $("orders-view").hidden = view.name !== "orders";
  for (const [id, active] of [
    ["nav-shop", view.name === "shop"],
    ["nav-orders", view.name !== "shop"],
  ]) {
    if (active) $(id).setAttribute("aria-current", "page");
    else $(id).removeAttribute("aria-current");
  }
  if (view.name === "order") showOrder(view.orderId);
  if (view.name === "orders") void showOrders();
  return true;
}

$("place-order").addEventListener("click", () => void placeOrder());
// The cart is below the products on a narrow screen: the link takes the shopper there without
// changing the address (a hash that names no view).
$("cart-jump").addEventListener("click", (event) => {
  event.preventDefault();
  $("cart").focus();
});
window.addEventListener("hashchange", () => {
  if (route()) $("main").focus();
});
route();
void loadCatalogue();
