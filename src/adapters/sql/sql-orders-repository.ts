import mssql from "mssql";
import { z } from "zod";
import { type Order, orderItemSchema, orderTotalMinor } from "../../domain/order.js";
import type { Clock } from "../../ports/clock.js";
import type { InsertOrderResult, OrdersRepository } from "../../ports/orders-repository.js";
import { INSERT_ORDER_IF_ABSENT, SELECT_ORDER } from "./statements.js";

interface OrderRow {
  order_id: string;
  customer_id: string;
  currency: string;
  items: string;
}

interface InsertedRow extends OrderRow {
  inserted: number;
}

const storedItems = z.array(orderItemSchema);

/** SQL Server's duplicate-key errors (primary key, unique index). */
const DUPLICATE_KEY = new Set([2627, 2601]);

/** The orders database on SQL Server / Azure SQL: one row per order in `dbo.orders` (statements.ts). */
export class SqlOrdersRepository implements OrdersRepository {
  constructor(
    private readonly pool: mssql.ConnectionPool,
    private readonly clock: Clock,
  ) {}

  async insertIfAbsent(order: Order): Promise<InsertOrderResult> {
    const request = this.pool
      .request()
      .input("orderId", mssql.NVarChar(64), order.orderId)
      .input("customerId", mssql.NVarChar(64), order.customerId)
      .input("currency", mssql.Char(3), order.currency)
      .input("totalMinor", mssql.BigInt, orderTotalMinor(order))
      .input("items", mssql.NVarChar(mssql.MAX), itemsJson(order))
      .input("createdAt", mssql.DateTime2(3), this.clock.now());
    let result: mssql.IResult<InsertedRow>;
    try {
      result = await request.query<InsertedRow>(INSERT_ORDER_IF_ABSENT);
    } catch (error) {
      // The range lock makes this unreachable in practice; should it happen, the row exists all the same.
      if (!isDuplicateKey(error)) throw error;
      return this.existing(order.orderId, await this.get(order.orderId));
    }
    const row = result.recordset[0];
    if (row?.inserted === 1) return { inserted: true };
    return this.existing(order.orderId, row ? orderFromRow(row) : undefined);
  }

  async get(orderId: string): Promise<Order | undefined> {
    const { recordset } = await this.pool
      .request()
      .input("orderId", mssql.NVarChar(64), orderId)
      .query<OrderRow>(SELECT_ORDER);
    const row = recordset[0];
    return row ? orderFromRow(row) : undefined;
  }

  private existing(orderId: string, order: Order | undefined): InsertOrderResult {
    if (!order) throw new Error(`order ${orderId} conflicted on insert but cannot be read`);
    return { inserted: false, existing: order };
  }
}

/** Only the item fields, in a fixed order, whatever else the objects carry. */
function itemsJson(order: Order): string {
  return JSON.stringify(
    order.items.map(({ sku, quantity, unitPriceMinor }) => ({ sku, quantity, unitPriceMinor })),
  );
}

function orderFromRow(row: OrderRow): Order {
  return {
    orderId: row.order_id,
    customerId: row.customer_id,
    currency: row.currency,
    items: storedItems.parse(JSON.parse(row.items)),
  };
}

function isDuplicateKey(error: unknown): boolean {
  return error instanceof mssql.RequestError && error.number !== undefined && DUPLICATE_KEY.has(error.number);
}
