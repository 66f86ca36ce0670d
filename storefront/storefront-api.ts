/**
 * The storefront's JSON API: the catalogue, checkout and the orders it placed. Checkout writes the
 * order, with its message in the outbox, into the order book first, then sends it to the orders queue,
 * so a status message can never arrive for an order the book does not know. Once written, the order is
 * placed: a send that fails may still have reached the queue, so the order is never taken out again,
 * and the outbox resends it with the same message id until the queue acknowledges it (outbox.ts).
 */
import { toInstant } from "../src/domain/time.js";
import type { Clock } from "../src/ports/clock.js";
import type { Logger } from "../src/ports/logger.js";
import type { Catalogue } from "./catalogue.js";
import { newCustomerId, newOrderId, orderMessageFor, orderQueueMessage, parseCart } from "./checkout.js";
import type { Answer } from "./http-io.js";
import { type OrderBook, type OrderView, UnreadableRowError } from "./order-book.js";
import type { Outbox } from "./outbox.js";

export interface StorefrontApiDeps {
  readonly catalogue: Catalogue;
  readonly book: OrderBook;
  readonly outbox: Outbox;
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
    order: (orderId) => {
      const found = readOrder(book, orderId);
      return found instanceof UnreadableRowError ? undefined : found;
    },
    getOrder: (orderId) => {
      const order = readOrder(book, orderId);
      if (order instanceof UnreadableRowError) {
        return {
          status: 500,
          body: { error: `order ${orderId} cannot be read back; it has been logged for the shop's staff` },
        };
      }
      if (order) return { status: 200, body: order };
      logger.debug("storefront.order.notFound", { orderId });
      return { status: 404, body: { error: `no order ${orderId} was placed here` } };
    },
  };
}

/** The order, undefined when it is not in the book, or the error (already logged) when it does not read back. */
function readOrder(book: OrderBook, orderId: string): OrderView | UnreadableRowError | undefined {
  if (!ORDER_ID.test(orderId)) return undefined;
  try {
    return book.get(orderId);
  } catch (error) {
    if (error instanceof UnreadableRowError) return error;
    throw error;
  }
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
  try {
    book.place(
      {
        orderId,
        customerId: message.customerId,
        placedAt: toInstant(now),
        currency: message.currency,
        items,
        message: outgoing,
      },
      now.getTime(),
    );
  } catch (error) {
    logger.error("storefront.order.notKept", { orderId, error: messageOf(error) });
    return {
      status: 503,
      body: { error: "the order could not be recorded; nothing was ordered, try again" },
    };
  }
  await deps.outbox.sendNow(orderId);
  const delivery = book.get(orderId)?.delivery ?? "sending";
  logger.info("storefront.order.placed", {
    orderId,
    messageId: outgoing.messageId,
    lines: items.length,
    totalMinor: items.reduce((sum, line) => sum + line.quantity * line.unitPriceMinor, 0),
    replyTo: deps.statusQueueName,
    delivery,
  });
  return { status: 202, body: { orderId, delivery }, headers: { Location: `/api/orders/${orderId}` } };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
