/**
 * The order book: every order this storefront placed and every status message it received about them,
 * in a SQLite file of its own, so a refresh, a restart or a second look loses nothing. Each status is
 * kept once (by its stable message id); the order's state is that of its latest status in the life of
 * the order (order-state.ts), so a duplicate or a late message never moves it back.
 */
import { type EmbeddedDatabase, openDatabase } from "../src/adapters/sqlite/database.js";
import type { Migration } from "../src/adapters/sqlite/migrations.js";
import {
  ORDER_STATUSES,
  type OrderStatus,
  type StatusMessage,
  statusMessageId,
} from "../src/domain/status-message.js";
import { compareStatusPlaces, type OrderState, stateOfStatus } from "./order-state.js";

const ORDER_BOOK_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "storefront order book: orders placed and statuses received",
    sql: `
      CREATE TABLE storefront_orders (
        order_id    TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL,
        placed_at   TEXT NOT NULL,
        currency    TEXT NOT NULL,
        items       TEXT NOT NULL,
        total_minor INTEGER NOT NULL,
        message_id  TEXT NOT NULL
      ) STRICT;
      CREATE TABLE storefront_statuses (
        message_id  TEXT PRIMARY KEY,
        order_id    TEXT NOT NULL REFERENCES storefront_orders (order_id) ON DELETE CASCADE,
        status      TEXT NOT NULL,
        attempt     INTEGER NOT NULL,
        at          TEXT NOT NULL,
        detail      TEXT,
        received_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX storefront_statuses_by_order ON storefront_statuses (order_id);`,
  },
];

export interface OrderLine {
  readonly sku: string;
  readonly name: string;
  readonly quantity: number;
  readonly unitPriceMinor: number;
}

export interface PlacedOrder {
  readonly orderId: string;
  readonly customerId: string;
  readonly placedAt: string;
  readonly currency: string;
  readonly items: readonly OrderLine[];
  /** The id it was sent to the orders queue with. */
  readonly messageId: string;
}

export interface StatusEntry {
  readonly status: OrderStatus;
  readonly attempt: number;
  readonly at: string;
  readonly detail: string | null;
}

/** An order as the API answers it. */
export interface OrderView {
  readonly orderId: string;
  readonly placedAt: string;
  readonly items: readonly OrderLine[];
  readonly totalMinor: number;
  readonly currency: string;
  readonly state: OrderState;
  /** Why the order is where it is, when a status said so (a failure's reason). */
  readonly detail: string | null;
  /** In the order of the life of an order, whatever order they arrived in. */
  readonly statuses: readonly StatusEntry[];
}

export type RecordOutcome = "recorded" | "duplicate" | "unknownOrder";

interface OrderRow {
  order_id: string;
  placed_at: string;
  currency: string;
  items: string;
  total_minor: number;
}

interface StatusRow {
  status: string;
  attempt: number;
  at: string;
  detail: string | null;
}

/** States in which an earlier status's reason still explains the order (compensation follows a failure). */
const EXPLAINED_BY_EARLIER: readonly OrderState[] = ["Compensating", "Compensated", "CompensationFailed"];

export class OrderBook {
  private readonly insertOrder;
  private readonly deleteOrder;
  private readonly orderRow;
  private readonly insertStatus;
  private readonly statusRows;

  private constructor(private readonly db: EmbeddedDatabase) {
    this.insertOrder = db.prepare<[string, string, string, string, string, number, string]>(
      `INSERT INTO storefront_orders (order_id, customer_id, placed_at, currency, items, total_minor, message_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.deleteOrder = db.prepare<[string]>("DELETE FROM storefront_orders WHERE order_id = ?");
    this.orderRow = db.prepare<[string], OrderRow>(
      "SELECT order_id, placed_at, currency, items, total_minor FROM storefront_orders WHERE order_id = ?",
    );
    this.insertStatus = db.prepare<[string, string, string, number, string, string | null, string]>(
      `INSERT OR IGNORE INTO storefront_statuses (message_id, order_id, status, attempt, at, detail, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.statusRows = db.prepare<[string], StatusRow>(
      "SELECT status, attempt, at, detail FROM storefront_statuses WHERE order_id = ?",
    );
  }

  /**
   * Opens (creating if needed) the order book in `path`, which may be ":memory:". With a rollback
   * journal, not WAL: in Azure the file lives on App Service's `/home`, a network share, where WAL's
   * shared memory does not work; a few writes per order need no more.
   */
  static open(path: string): OrderBook {
    return new OrderBook(openDatabase(path, { migrations: ORDER_BOOK_MIGRATIONS, journalMode: "DELETE" }));
  }

  place(order: PlacedOrder): void {
    const total = order.items.reduce((sum, line) => sum + line.quantity * line.unitPriceMinor, 0);
    this.insertOrder.run(
      order.orderId,
      order.customerId,
      order.placedAt,
      order.currency,
      JSON.stringify(order.items),
      total,
      order.messageId,
    );
  }

  /** Removes an order that could not be sent: the Scheduler never heard of it. */
  forget(orderId: string): void {
    this.deleteOrder.run(orderId);
  }

  /** Keeps a status message once; a status of an order this book never placed is not kept. */
  record(message: StatusMessage, receivedAt: string): RecordOutcome {
    return this.db.transaction((): RecordOutcome => {
      if (!this.orderRow.get(message.orderId)) return "unknownOrder";
      const inserted = this.insertStatus.run(
        statusMessageId(message),
        message.orderId,
        message.status,
        message.attempt,
        message.at,
        message.detail,
        receivedAt,
      );
      return inserted.changes === 1 ? "recorded" : "duplicate";
    })();
  }

  get(orderId: string): OrderView | undefined {
    const row = this.orderRow.get(orderId);
    return row ? this.viewOf(row) : undefined;
  }

  /** The orders of `orderIds` this book holds, in the order asked; unknown ids are left out. */
  list(orderIds: readonly string[]): OrderView[] {
    return orderIds.flatMap((id) => {
      const view = this.get(id);
      return view ? [view] : [];
    });
  }

  close(): void {
    this.db.close();
  }

  private viewOf(row: OrderRow): OrderView {
    const statuses = this.statusRows
      .all(row.order_id)
      .flatMap((s) => (isStatus(s.status) ? [{ ...s, status: s.status }] : []))
      .sort(compareStatusPlaces);
    // The latest in the life of the order, whatever arrived last: the state never moves back.
    const current = statuses.at(-1) ?? null;
    const state: OrderState = current ? stateOfStatus(current.status) : "Submitted";
    return {
      orderId: row.order_id,
      placedAt: row.placed_at,
      items: JSON.parse(row.items) as OrderLine[],
      totalMinor: row.total_minor,
      currency: row.currency,
      state,
      detail: detailOf(state, current, statuses),
      statuses,
    };
  }
}

function detailOf(
  state: OrderState,
  current: StatusEntry | null,
  statuses: readonly StatusEntry[],
): string | null {
  if (current?.detail) return current.detail;
  if (!EXPLAINED_BY_EARLIER.includes(state)) return null;
  return statuses.findLast((entry) => entry.detail)?.detail ?? null;
}

function isStatus(value: string): value is OrderStatus {
  return (ORDER_STATUSES as readonly string[]).includes(value);
}
