import type { CartLine } from "./carts.js";

/** An order as the storefront reports it; the smoke test reads only these fields. */
export interface StoreOrder {
  readonly orderId: string;
  readonly state: string;
}

/** The states after which the storefront expects no further status for an order. */
export const FINAL_STATES = ["Processed", "Error", "Compensated", "CompensationFailed"] as const;

export function isFinal(state: string): boolean {
  return (FINAL_STATES as readonly string[]).includes(state);
}

/** Each call may take this long before it counts as failed. */
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * The storefront's HTTP API, as its page uses it: the catalogue, checkout, and the orders' states.
 * `fetch` keeps connections alive between calls.
 */
export class StoreClient {
  constructor(private readonly baseUrl: string) {}

  async skus(): Promise<string[]> {
    const body = await this.json("GET", "/api/catalogue");
    const products = (body as { products?: unknown }).products;
    if (!Array.isArray(products)) throw new Error("GET /api/catalogue: no products array in the answer");
    return products.map((product, index) => {
      const sku = (product as { sku?: unknown }).sku;
      if (typeof sku !== "string") throw new Error(`GET /api/catalogue: product ${index} has no sku`);
      return sku;
    });
  }

  /** Checkout: the order id the storefront gave the order. */
  async placeOrder(items: readonly CartLine[]): Promise<string> {
    const body = await this.json("POST", "/api/orders", { items }, 202);
    const orderId = (body as { orderId?: unknown }).orderId;
    if (typeof orderId !== "string") throw new Error("POST /api/orders: no orderId in the answer");
    return orderId;
  }

  /** The states of the orders named; an id the storefront does not know is left out. */
  async states(orderIds: readonly string[]): Promise<StoreOrder[]> {
    const query = orderIds.map(encodeURIComponent).join(",");
    const body = await this.json("GET", `/api/orders?ids=${query}`);
    const orders = (body as { orders?: unknown }).orders;
    if (!Array.isArray(orders)) throw new Error("GET /api/orders: no orders array in the answer");
    return orders.filter(
      (order): order is StoreOrder =>
        typeof order?.orderId === "string" && typeof (order as { state?: unknown }).state === "string",
    );
  }

  private async json(method: string, path: string, body?: unknown, expected = 200): Promise<unknown> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? { accept: "application/json" } : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status !== expected) {
      throw new Error(`${method} ${path.split("?")[0]}: ${response.status} ${text.slice(0, 200)}`);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new Error(`${method} ${path.split("?")[0]}: the answer is not JSON`);
    }
  }
}
