/**
 * The storefront's JSON API: the catalogue, checkout and the orders it placed. Checkout writes the
 * order into the order book first, then sends it to the orders queue, so a status message can never
 * arrive for an order the book does not know; a send that fails takes the order out again.
 */
import { toInstant } from "../src/domain/time.js";
import type { Clock } from "../src/ports/clock.js";
import type { Logger } from "../src/ports/logger.js";
import type { MessageQueue } from "../src/ports/message-queue.js";
import type { Catalogue } from "./catalogue.js";
import { newCustomerId, newOrderId, orderMessageFor, orderQueueMessage, parseCart } from "./checkout.js";
import type { Answer } from "./http-io.js";
import type { OrderBook, OrderView } from "./order-book.js";

export interface StorefrontApiDeps {
  readonly catalogue: Catalogue;
  readonly book: OrderBook;
  readonly orders: MessageQueue;
  readonly statusQueueName: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** At most this many ids in one `GET /api/orders?ids=`. */
export const MAX_LISTED_ORDERS = 100;
const ORDER_ID = /^[A-Za-z0-9\-_.:]{1,64}$/;

export interface StorefrontApi {
  catalogue(): Answer;
  placeOrder(body: string): Promise<Answer>;
  listOrders(ids: string | null): Answer;
  getOrder(orderId: string): Answer;
  /** The order, for an event stream; undefined when this storefront did not place it. */
  order(orderId: string): OrderView | undefined;
}

export function createStorefrontApi(deps: StorefrontApiDeps): StorefrontApi {
  const { catalogue, book, logger } = deps;
  return {
    catalogue: () => ({
      status: 200,
      body: { currency: catalogue.currency, products: catalogue.products },
    }),
    placeOrder: (body) => placeOrder(deps, body),
    listOrders: (ids) => {
      const wanted = (ids ?? "").split(",").filter((id) => id !== "");
      const bad = wanted.find((id) => !ORDER_ID.test(id));
      if (bad !== undefined)
        return { status: 400, body: { error: `ids: ${JSON.stringify(bad)} is not an order id` } };
      if (wanted.length > MAX_LISTED_ORDERS) {
        return { status: 400, body: { error: `ids: at most ${MAX_LISTED_ORDERS} order ids at once` } };
      }
      return { status: 200, body: { orders: book.list([...new Set(wanted)]) } };
    },
    order: (orderId) => (ORDER_ID.test(orderId) ? book.get(orderId) : undefined),
    getOrder: (orderId) => {
      const order = ORDER_ID.test(orderId) ? book.get(orderId) : undefined;
      if (order) return { status: 200, body: order };
      logger.debug("storefront.order.notFound", { orderId });
      return { status: 404, body: { error: `no order ${orderId} was placed here` } };
    },
  };
}

async function placeOrder(deps: StorefrontApiDeps, body: string): Promise<Answer> {
  const { catalogue, book, logger } = deps;
  const cart = parseCart(body, catalogue);
  if (!cart.ok) {
    logger.info("storefront.order.refused", { reason: cart.error });
    return { status: 400, body: { error: cart.error } };
  }
  const now = deps.clock.now();
  const orderId = newOrderId(now);
  const message = orderMessageFor(
    { orderId, customerId: newCustomerId(), lines: cart.value, replyTo: deps.statusQueueName },
    catalogue,
  );
  const outgoing = orderQueueMessage(message);
  const items = message.items.map((item) => ({
    sku: item.sku,
    name: catalogue.product(item.sku)?.name ?? item.sku,
    quantity: item.quantity,
    unitPriceMinor: item.unitPriceMinor,
  }));
  book.place({
    orderId,
    customerId: message.customerId,
    placedAt: toInstant(now),
    currency: message.currency,
    items,
    messageId: outgoing.messageId,
  });
  try {
    await deps.orders.send(outgoing);
  } catch (error) {
    book.forget(orderId);
    logger.error("storefront.order.sendFailed", {
      orderId,
      error: error instanceof Error ? error.message : String(error),
    });
    return { status: 503, body: { error: "the order could not be sent; nothing was ordered, try again" } };
  }
  const view = book.get(orderId);
  logger.info("storefront.order.placed", {
    orderId,
    messageId: outgoing.messageId,
    lines: items.length,
    totalMinor: view?.totalMinor ?? null,
    replyTo: deps.statusQueueName,
  });
  return { status: 202, body: { orderId }, headers: { Location: `/api/orders/${orderId}` } };
}
