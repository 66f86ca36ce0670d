/** Who is watching which order (the open server-sent event streams), told of each new status. */
import type { OrderView } from "./order-book.js";

export type OrderListener = (order: OrderView) => void;

export class LiveOrders {
  private readonly listeners = new Map<string, Set<OrderListener>>();

  /** Starts telling `listener` of `orderId`'s changes; the returned function stops it. */
  watch(orderId: string, listener: OrderListener): () => void {
    let set = this.listeners.get(orderId);
    if (!set) {
      set = new Set();
      this.listeners.set(orderId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(orderId);
    };
  }

  publish(order: OrderView): void {
    for (const listener of [...(this.listeners.get(order.orderId) ?? [])]) listener(order);
  }
}
