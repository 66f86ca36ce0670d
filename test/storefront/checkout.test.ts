import { describe, expect, it } from "vitest";
import { parseOrderMessage } from "../../src/domain/order.js";
import { loadCatalogue } from "../../storefront/catalogue.js";
import { orderMessageFor, orderQueueMessage, parseCart } from "../../storefront/checkout.js";

const catalogue = loadCatalogue();

function refusal(body: unknown): string {
  const parsed = parseCart(typeof body === "string" ? body : JSON.stringify(body), catalogue);
  if (parsed.ok) throw new Error("the cart was accepted");
  return parsed.error;
}

describe("the catalogue", () => {
  it("loads the shipped catalogue: a handful of products in one currency", () => {
    expect(catalogue.currency).toBe("EUR");
    expect(catalogue.products.length).toBeGreaterThanOrEqual(3);
    expect(catalogue.product("TEA-SENCHA")?.unitPriceMinor).toBe(1250);
  });

  it("refuses a malformed catalogue, naming the field", () => {
    const product = { sku: "A", name: "A", description: "", unitPriceMinor: 1 };
    expect(() => loadCatalogue({ currency: "eur", products: [product] })).toThrow(/currency/);
    expect(() => loadCatalogue({ currency: "EUR", products: [product, product] })).toThrow(
      /each sku must appear once/,
    );
    expect(() => loadCatalogue({ currency: "EUR", products: [{ ...product, unitPriceMinor: -1 }] })).toThrow(
      /products\[0\]\.unitPriceMinor/,
    );
  });
});

describe("checkout", () => {
  it("accepts a cart of catalogue products", () => {
    const parsed = parseCart(
      JSON.stringify({
        items: [
          { sku: "TEA-SENCHA", quantity: 2 },
          { sku: "MUG-STONE", quantity: 1 },
        ],
      }),
      catalogue,
    );
    expect(parsed).toEqual({
      ok: true,
      value: [
        { sku: "TEA-SENCHA", quantity: 2 },
        { sku: "MUG-STONE", quantity: 1 },
      ],
    });
  });

  it("refuses a bad cart, naming what is wrong", () => {
    expect(refusal("{not json")).toMatch(/not JSON/);
    expect(refusal({ items: [] })).toMatch(/items: .*cart is empty/);
    expect(refusal({})).toMatch(/items: is required/);
    expect(refusal({ items: [{ sku: "NOPE", quantity: 1 }] })).toBe(
      "invalid cart: items[0].sku: NOPE is not in the catalogue",
    );
    expect(refusal({ items: [{ sku: "TEA-SENCHA", quantity: 0 }] })).toMatch(
      /items\[0\]\.quantity: must be an integer from 1 to 99/,
    );
    expect(refusal({ items: [{ sku: "TEA-SENCHA", quantity: 100 }] })).toMatch(/items\[0\]\.quantity/);
    expect(refusal({ items: [{ sku: "TEA-SENCHA", quantity: 1.5 }] })).toMatch(/items\[0\]\.quantity/);
    expect(
      refusal({
        items: [
          { sku: "TEA-SENCHA", quantity: 1 },
          { sku: "TEA-SENCHA", quantity: 2 },
        ],
      }),
    ).toMatch(/items\[1\]\.sku: TEA-SENCHA is in the cart twice/);
    // Prices come from the catalogue, never from the browser.
    expect(refusal({ items: [{ sku: "TEA-SENCHA", quantity: 1, unitPriceMinor: 1 }] })).toMatch(/items\[0\]/);
  });

  it("prices the order from the catalogue and names the storefront's status queue as replyTo", () => {
    const message = orderMessageFor(
      {
        orderId: "sf-1",
        customerId: "guest-1",
        lines: [{ sku: "KETTLE-GOOSE", quantity: 2 }],
        replyTo: "storefront-status",
      },
      catalogue,
    );
    expect(message).toEqual({
      schemaVersion: 1,
      orderId: "sf-1",
      customerId: "guest-1",
      currency: "EUR",
      items: [{ sku: "KETTLE-GOOSE", quantity: 2, unitPriceMinor: 4900 }],
      replyTo: "storefront-status",
    });
  });

  it("refuses to name one of the pipeline's own queues as replyTo", () => {
    const order = {
      orderId: "sf-1",
      customerId: "guest-1",
      lines: [{ sku: "NOTE-A5", quantity: 1 }],
      replyTo: "orders",
    };
    expect(() => orderMessageFor(order, catalogue)).toThrow(/replyTo/);
  });

  it("sends the order message under an id derived from its content, so a resend is a duplicate", () => {
    const order = {
      orderId: "sf-1",
      customerId: "guest-1",
      lines: [{ sku: "NOTE-A5", quantity: 1 }],
      replyTo: "sf-status",
    };
    const first = orderQueueMessage(orderMessageFor(order, catalogue));
    const again = orderQueueMessage(orderMessageFor(order, catalogue));
    const other = orderQueueMessage(
      orderMessageFor({ ...order, lines: [{ sku: "NOTE-A5", quantity: 2 }] }, catalogue),
    );
    expect(first.messageId).toMatch(/^sf-1:[0-9a-f]{16}$/);
    expect(again.messageId).toBe(first.messageId);
    expect(other.messageId).not.toBe(first.messageId);
    expect(parseOrderMessage(first.body).ok).toBe(true);
  });
});
