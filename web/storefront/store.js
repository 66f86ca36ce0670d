/*
 * The storefront's page: the catalogue, a cart, checkout, one order followed live over server-sent
 * events, and the orders placed in this browser (their ids in localStorage, their details from the API).
 * Views are chosen by the address's hash: #/ the shop, #/orders the list, #/orders/{id} one order.
 * No framework and no build step: plain DOM code, every value written as text. Loaded as a module.
 */
const $ = (id) => document.getElementById(id);
const ORDERS_KEY = "storefront.orders";
const CART_KEY = "storefront.cart";
const FINAL = new Set(["Processed", "Error", "Compensated", "CompensationFailed"]);
const FAILED = new Set(["Error", "Compensated", "CompensationFailed", "Compensating"]);
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
let stream = null;

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
    const remove = element("button", "Remove");
    remove.type = "button";
    remove.setAttribute("aria-label", `Remove ${product.name}`);
    remove.addEventListener("click", () => {
      delete cart[sku];
      saveCart();
      renderCart();
      $("place-order").focus();
    });
    body.append(
      cells(
        element("tr"),
        product.name,
        input,
        money(product.unitPriceMinor * quantity, catalogue.currency),
        remove,
      ),
    );
  }
  const empty = body.children.length === 0;
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
  $("order-lines").replaceChildren();
  $("timeline").replaceChildren();
  stream = new EventSource(`/api/orders/${encodeURIComponent(orderId)}/events`);
  stream.addEventListener("status", (event) => {
    const order = JSON.parse(event.data);
    renderOrder(order);
    if (FINAL.has(order.state)) closeStream();
  });
  stream.addEventListener("error", () => {
    if (stream?.readyState === EventSource.CLOSED) {
      $("order-state").textContent = "This order could not be found here.";
    }
  });
}

function closeStream() {
  stream?.close();
  stream = null;
}

function stateText(order) {
  return FAILED.has(order.state) && order.detail ? `${order.state}: ${order.detail}` : order.state;
}

function renderOrder(order) {
  const state = $("order-state");
  state.textContent = stateText(order);
  state.dataset.state = order.state;
  $("order-explain").textContent = EXPLANATIONS[order.state] ?? "";
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
    const time = element("time", new Date(status.at).toLocaleTimeString());
    time.dateTime = status.at;
    item.append(element("strong", STATUS_WORDS[status.status] ?? status.status), " · ", time);
    if (status.attempt > 0) item.append(` · attempt ${status.attempt}`);
    if (status.detail) item.append(element("span", status.detail, "detail"));
    timeline.append(item);
  }
  $("timeline-empty").hidden = order.statuses.length > 0;
}

/* The orders placed in this browser. */

async function showOrders() {
  const ids = readJson(localStorage, ORDERS_KEY, []);
  const message = $("orders-message");
  const table = $("orders-table");
  table.hidden = true;
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
        new Date(order.placedAt).toLocaleString(),
        money(order.totalMinor, order.currency),
        stateText(order),
      ),
    );
  }
  message.textContent = orders.length === 0 ? "None of your orders is known here any more." : "";
  table.hidden = orders.length === 0;
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
window.addEventListener("hashchange", () => {
  if (route()) $("main").focus();
});
route();
void loadCatalogue();
