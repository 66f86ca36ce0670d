import { seededRandom } from "../../src/domain/backoff.js";

export interface CartLine {
  readonly sku: string;
  readonly quantity: number;
}

/** At most this many different products in one cart, each 1 to MAX_QUANTITY times. */
const MAX_LINES = 3;
const MAX_QUANTITY = 3;

/**
 * `count` small carts drawn from the catalogue's products: 1 to 3 different products, 1 to 3 of each.
 * The same seed and catalogue give the same carts.
 */
export function randomCarts(skus: readonly string[], count: number, seed: number): CartLine[][] {
  if (skus.length === 0) throw new Error("the catalogue has no products to put in a cart");
  const random = seededRandom(seed);
  const pick = (below: number) => Math.floor(random() * below);
  return Array.from({ length: count }, () => {
    const lines = 1 + pick(Math.min(MAX_LINES, skus.length));
    const remaining = [...skus];
    return Array.from({ length: lines }, () => {
      const [sku] = remaining.splice(pick(remaining.length), 1);
      return { sku: sku as string, quantity: 1 + pick(MAX_QUANTITY) };
    });
  });
}
