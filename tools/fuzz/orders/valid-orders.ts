import fc from "fast-check";
import type { OrderItem, OrderMessage } from "../../../src/domain/order.js";
import {
  ALPHANUMERIC,
  CAPITALS,
  IDENTIFIER_CHARS,
  MAX_IDENTIFIER,
  MAX_ITEMS,
  MAX_REPLY_TO,
  QUANTITY,
  QUEUE_NAME_CHARS,
  UNIT_PRICE,
} from "./spec.js";

const fromChars = (chars: readonly string[], minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...chars), minLength, maxLength });

/** An identifier: short, long, or exactly at the limit. */
export const identifier = fc.oneof(
  { arbitrary: fromChars(IDENTIFIER_CHARS, 1, 12), weight: 6 },
  { arbitrary: fromChars(IDENTIFIER_CHARS, 1, MAX_IDENTIFIER), weight: 2 },
  { arbitrary: fromChars(IDENTIFIER_CHARS, MAX_IDENTIFIER, MAX_IDENTIFIER), weight: 1 },
);

/**
 * Order ids: often from a small set, so that runs meet orders earlier runs submitted (duplicates
 * and conflicts across runs), otherwise any identifier.
 */
export const orderId = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 12 }).map((n) => `ord-${n}`), weight: 1 },
  { arbitrary: identifier, weight: 3 },
);

const queueName = fc.oneof(
  { arbitrary: fc.constantFrom("status-shop-web", "order-status", "a", "shop/replies~1"), weight: 2 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom(...ALPHANUMERIC), fromChars(QUEUE_NAME_CHARS, 0, MAX_REPLY_TO - 1))
      .map(([first, rest]) => first + rest),
    weight: 1,
  },
);

const quantity = fc.oneof(fc.constantFrom(QUANTITY.min, QUANTITY.max), fc.integer(QUANTITY));
const unitPrice = fc.oneof(fc.constantFrom(UNIT_PRICE.min, UNIT_PRICE.max), fc.integer(UNIT_PRICE));

export const item: fc.Arbitrary<OrderItem> = fc.record({
  sku: identifier,
  quantity,
  unitPriceMinor: unitPrice,
});

const items = fc.oneof(
  { arbitrary: fc.array(item, { minLength: 1, maxLength: 4 }), weight: 12 },
  { arbitrary: fc.array(item, { minLength: MAX_ITEMS - 2, maxLength: MAX_ITEMS }), weight: 1 },
);

/** A valid order message, shaped like the demo's orders and reaching every limit of the contract. */
export const validOrder: fc.Arbitrary<OrderMessage> = fc
  .record({
    orderId,
    customerId: identifier,
    currency: fc.oneof(fc.constantFrom("EUR", "USD"), fromChars(CAPITALS, 3, 3)),
    items,
    replyTo: fc.option(queueName, { nil: undefined, freq: 2 }),
  })
  .map(({ replyTo, ...rest }) => ({
    schemaVersion: 1,
    ...rest,
    ...(replyTo === undefined ? {} : { replyTo }),
  }));
