import type { Transaction } from "better-sqlite3";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import { type Order, orderTotalMinor } from "../../src/domain/order.js";
import type { Clock } from "../../src/ports/clock.js";
import type { InsertOrderResult, OrdersRepository } from "../../src/ports/orders-repository.js";

interface OrderRow {
  order_id: string;
  customer_id: string;
  currency: string;
}

interface ItemRow {
  sku: string;
  quantity: number;
  unit_price_minor: number;
}

/** The orders database as two tables: `orders` (one row per order) and `order_items` (one per line). */
export class SqliteOrdersRepository implements OrdersRepository {
  private readonly insert: Transaction<(order: Order) => InsertOrderResult>;
  private readonly read: Transaction<(orderId: string) => Order | undefined>;

  constructor(
    db: EmbeddedDatabase,
    private readonly clock: Clock,
  ) {
    const insertOrder = db.prepare<[string, string, string, number, string]>(
      `INSERT INTO orders (order_id, customer_id, currency, total_minor, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (order_id) DO NOTHING`,
    );
    const insertItem = db.prepare<[string, number, string, number, number]>(
      "INSERT INTO order_items (order_id, line_no, sku, quantity, unit_price_minor) VALUES (?, ?, ?, ?, ?)",
    );
    const selectOrder = db.prepare<[string], OrderRow>(
      "SELECT order_id, customer_id, currency FROM orders WHERE order_id = ?",
    );
    const selectItems = db.prepare<[string], ItemRow>(
      "SELECT sku, quantity, unit_price_minor FROM order_items WHERE order_id = ? ORDER BY line_no",
    );

    // One transaction reads the order and its lines, so they come from one snapshot.
    this.read = db.transaction((orderId: string) => {
      const row = selectOrder.get(orderId);
      if (!row) return undefined;
      return {
        orderId: row.order_id,
        customerId: row.customer_id,
        currency: row.currency,
        items: selectItems.all(orderId).map((item) => ({
          sku: item.sku,
          quantity: item.quantity,
          unitPriceMinor: item.unit_price_minor,
        })),
      };
    });

    this.insert = db.transaction((order: Order): InsertOrderResult => {
      const { orderId, customerId, currency, items } = order;
      const createdAt = this.clock.now().toISOString();
      const { changes } = insertOrder.run(orderId, customerId, currency, orderTotalMinor(order), createdAt);
      if (changes === 0) {
        const existing = this.read(orderId);
        if (!existing) throw new Error(`order ${orderId} conflicted on insert but cannot be read`);
        return { inserted: false, existing };
      }
      items.forEach((item, index) => {
        insertItem.run(orderId, index + 1, item.sku, item.quantity, item.unitPriceMinor);
      });
      return { inserted: true };
    });
  }

  async insertIfAbsent(order: Order): Promise<InsertOrderResult> {
    // IMMEDIATE: the write lock is held from the start, so a racing connection waits and then conflicts.
    return this.insert.immediate(order);
  }

  async get(orderId: string): Promise<Order | undefined> {
    return this.read(orderId);
  }
}
