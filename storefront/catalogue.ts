/**
 * The products on sale, from `catalogue.json` beside this module (imported, so a build carries it along).
 * It is validated when the storefront starts: a malformed catalogue stops start-up with a message naming
 * the field.
 */
import { z } from "zod";
import { orderItemSchema } from "../src/domain/order.js";
import { text, typeError, validate } from "../src/domain/validation.js";
import CATALOGUE_JSON from "./catalogue.json" with { type: "json" };

const productSchema = z.strictObject({
  sku: orderItemSchema.shape.sku,
  name: text(1, 80),
  description: text(0, 300),
  unitPriceMinor: orderItemSchema.shape.unitPriceMinor,
});

const catalogueSchema = z
  .strictObject({
    currency: text(3, 3, { regex: /^[A-Z]{3}$/, description: "three capital letters (ISO 4217)" }),
    products: z
      .array(productSchema, { error: typeError("an array") })
      .min(1, { error: "must list at least one product" })
      .max(200, { error: "must list at most 200 products" }),
  })
  .refine((catalogue) => new Set(catalogue.products.map((p) => p.sku)).size === catalogue.products.length, {
    error: "products: each sku must appear once",
  });

export type Product = z.infer<typeof productSchema>;

export interface Catalogue {
  readonly currency: string;
  readonly products: readonly Product[];
  /** The product with this SKU, or undefined. */
  product(sku: string): Product | undefined;
}

/** Builds a catalogue from its JSON value (default: `catalogue.json`); throws naming every field that is wrong. */
export function loadCatalogue(input: unknown = CATALOGUE_JSON): Catalogue {
  const parsed = validate("catalogue", catalogueSchema, input);
  if (!parsed.ok) throw parsed.error;
  const { currency, products } = parsed.value;
  const bySku = new Map(products.map((product) => [product.sku, product]));
  return { currency, products, product: (sku) => bySku.get(sku) };
}
