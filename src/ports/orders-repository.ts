import type { Order } from "../domain/order.js";

export type InsertOrderResult =
  | { readonly inserted: true }
  | { readonly inserted: false; readonly existing: Order };

/** The orders (business) database. Orders are immutable once written. */
export interface OrdersRepository {
  /** Inserts the order unless its `orderId` exists; then returns the stored order for comparison. */
  insertIfAbsent(order: Order): Promise<InsertOrderResult>;
  get(orderId: string): Promise<Order | undefined>;
}
