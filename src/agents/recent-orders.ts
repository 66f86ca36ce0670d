import type { Order } from "../domain/order.js";
import type { OrdersRepository } from "../ports/orders-repository.js";

/**
 * The orders an Agent read last, kept in memory: an order is read for each of its steps, one after
 * the other, and never changes once accepted, so a kept copy is never stale. An order not found is
 * not kept. The oldest goes first when `capacity` is reached.
 */
export function recentOrders(
  orders: Pick<OrdersRepository, "get">,
  capacity = 1_024,
): Pick<OrdersRepository, "get"> {
  const kept = new Map<string, Order>();
  return {
    get: async (orderId) => {
      const hit = kept.get(orderId);
      if (hit) return hit;
      const order = await orders.get(orderId);
      if (!order) return undefined;
      const oldest = kept.keys().next();
      if (kept.size >= capacity && !oldest.done) kept.delete(oldest.value);
      kept.set(orderId, order);
      return order;
    },
  };
}
