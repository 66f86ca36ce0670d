/**
 * The console's addresses (web/dashboard/router.js): each view's address names it, with its filters,
 * and any order id, however spelled, makes an address that leads back to that order.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

interface Route {
  view: string;
  orderId?: string;
  state?: string;
  needs?: string;
  limit?: string;
}
interface RouterModule {
  parseRoute(hash: string): Route;
  ordersHref(filter: { state?: string; needs?: string; limit?: string }): string;
  orderHref(orderId: string): string;
}

const modulePath = pathToFileURL(join(import.meta.dirname, "../../web/dashboard/router.js")).href;
const { parseRoute, ordersHref, orderHref } = (await import(modulePath)) as RouterModule;

describe("F27-1: the console's addresses", () => {
  it("name the overview, the orders with their filters, one order, and the partner", () => {
    expect(parseRoute("")).toEqual({ view: "overview" });
    expect(parseRoute("#/")).toEqual({ view: "overview" });
    expect(parseRoute("#/orders")).toEqual({ view: "orders", needs: "", state: "", limit: "25" });
    expect(parseRoute("#/orders?state=Error&limit=50")).toEqual({
      view: "orders",
      needs: "",
      state: "Error",
      limit: "50",
    });
    expect(parseRoute("#/orders?needs=attention")).toMatchObject({ view: "orders", needs: "attention" });
    // A page size the list does not offer is the first it does.
    expect(parseRoute("#/orders?limit=7").limit).toBe("25");
    expect(parseRoute("#/orders/ord-1")).toEqual({ view: "order", orderId: "ord-1" });
    expect(parseRoute("#/partner")).toEqual({ view: "partner" });
    for (const unknown of ["#/nowhere", "#/orders/a/b", "#/partner/x", "#/orders/%E0%A4%A"]) {
      expect(parseRoute(unknown), unknown).toEqual({ view: "missing" });
    }
  });

  it("write each filter back into the address it was read from", () => {
    for (const filter of [
      {},
      { state: "Error" },
      { state: "Pending", limit: "100" },
      { needs: "attention" },
    ]) {
      const href = ordersHref(filter);
      expect(parseRoute(href), href).toMatchObject({
        view: "orders",
        state: "",
        needs: "",
        limit: "25",
        ...filter,
      });
    }
    expect(ordersHref({ state: "Error" })).toBe("#/orders?state=Error");
  });

  it("lead back to an order whatever its id holds", () => {
    for (const orderId of ["ord-1", "a/b", "what?x=1", "50%", "#hash", "ünï cödé", "a&b=c"]) {
      expect(parseRoute(orderHref(orderId)), orderId).toEqual({ view: "order", orderId });
    }
  });
});
