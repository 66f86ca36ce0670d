/**
 * The order book: every order this storefront placed, the message of each until the orders queue
 * acknowledges it (the outbox, storefront/outbox.ts), and every status message it received about them,
 * in a SQLite file of its own, so a refresh, a restart or a second look loses nothing. An order is never
 * taken out again: once placed, the storefront owes the shopper its outcome. Each status is kept once (by
 * its stable message id); the order's state is that of its latest status in the life of the order
 * (order-state.ts), so a duplicate or a late message never moves it back.
 */
import { type EmbeddedDatabase, openDatabase } from "../src/adapters/sqlite/database.js";
import { type StatusMessage, statusMessageId } from "../src/domain/status-message.js";
import type { Logger } from "../src/ports/logger.js";
import type { OutgoingMessage } from "../src/ports/message-queue.js";
import { ORDER_BOOK_MIGRATIONS } from "./order-book-migrations.js";
import {
  type Delivery,
  type OrderLine,
  type OrderRecord,
  type OutboxEntry,
  readOrderRow,
  readOutboxRow,
  readStatusRow,
  type StatusEntry,
  UnreadableRowError,
} from "./order-book-rows.js";
import { compareStatusPlaces, type OrderState, stateOfStatus } from "./order-state.js";

export type { Delivery, OrderLine, OutboxEntry, StatusEntry } from "./order-book-rows.js";
export { UnreadableRowError } from "./order-book-rows.js";

export interface PlacedOrder {
  readonly orderId: string;
  readonly customerId: string;
  readonly placedAt: string;
  readonly currency: string;
  readonly items: readonly OrderLine[];
  /** The order message for the orders queue, sent and resent with this id. */
  readonly message: OutgoingMessage;
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
  /** Whether the orders queue has the order's message yet (`sending` while the outbox still resends it). */
  readonly delivery: Delivery;
  /** In the order of the life of an order, whatever order they arrived in. */
  readonly statuses: readonly StatusEntry[];
}

export type RecordOutcome = "recorded" | "duplicate" | "unknownOrder";

/** States in which an earlier status's reason still explains the order (compensation follows a failure). */
const EXPLAINED_BY_EARLIER: readonly OrderState[] = ["Compensating", "Compensated", "CompensationFailed"];

const ORDER_COLUMNS = `o.order_id, o.placed_at, o.currency, o.items, o.total_minor,
  CASE WHEN x.order_id IS NULL THEN 'sent' WHEN x.abandoned_at IS NULL THEN 'sending' ELSE 'notSent' END
    AS delivery`;
const OUTBOX_COLUMNS = "x.order_id, o.placed_at, o.message_id, x.body, x.subject, x.attempts";
const OUTBOX_JOIN = "storefront_outbox x JOIN storefront_orders o ON o.order_id = x.order_id";

export class OrderBook {
  private readonly insertOrder;
  private readonly insertOutbox;
  private readonly orderExists;
  private readonly orderRow;
  private readonly insertStatus;
  private readonly statusRows;
  private readonly dueRows;
  private readonly outboxRow;
  private readonly nextDue;
  private readonly deleteOutbox;
  private readonly deferOutbox;
  private readonly abandonOutbox;
  private readonly dueAllNow;

  private constructor(
    private readonly db: EmbeddedDatabase,
    private readonly logger: Logger,
  ) {
    this.insertOrder = db.prepare<[string, string, string, string, string, number, string]>(
      `INSERT INTO storefront_orders (order_id, customer_id, placed_at, currency, items, total_minor, message_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertOutbox = db.prepare<[string, string, string | null, number]>(
      `INSERT INTO storefront_outbox (order_id, body, subject, attempts, next_attempt_at) VALUES (?, ?, ?, 0, ?)`,
    );
    this.orderExists = db.prepare<[string], unknown>("SELECT 1 FROM storefront_orders WHERE order_id = ?");
    this.orderRow = db.prepare<[string], unknown>(
      `SELECT ${ORDER_COLUMNS} FROM storefront_orders o
       LEFT JOIN storefront_outbox x ON x.order_id = o.order_id WHERE o.order_id = ?`,
    );
    this.insertStatus = db.prepare<[string, string, string, number, string, string | null, string]>(
      `INSERT OR IGNORE INTO storefront_statuses (message_id, order_id, status, attempt, at, detail, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.statusRows = db.prepare<[string], { message_id: string }>(
      "SELECT message_id, status, attempt, at, detail FROM storefront_statuses WHERE order_id = ?",
    );
    this.dueRows = db.prepare<[number, number], { order_id: string }>(
      `SELECT ${OUTBOX_COLUMNS} FROM ${OUTBOX_JOIN}
       WHERE x.abandoned_at IS NULL AND x.next_attempt_at <= ? ORDER BY x.next_attempt_at LIMIT ?`,
    );
    this.outboxRow = db.prepare<[string], { order_id: string }>(
      `SELECT ${OUTBOX_COLUMNS} FROM ${OUTBOX_JOIN} WHERE x.order_id = ? AND x.abandoned_at IS NULL`,
    );
    this.nextDue = db.prepare<[number], { at: number | null }>(
      "SELECT MIN(next_attempt_at) AS at FROM storefront_outbox WHERE abandoned_at IS NULL AND next_attempt_at > ?",
    );
    this.deleteOutbox = db.prepare<[string]>("DELETE FROM storefront_outbox WHERE order_id = ?");
    this.deferOutbox = db.prepare<[number, number, string, string]>(
      "UPDATE storefront_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE order_id = ?",
    );
    this.abandonOutbox = db.prepare<[number, string, string, string]>(
      "UPDATE storefront_outbox SET attempts = ?, abandoned_at = ?, last_error = ? WHERE order_id = ?",
    );
    this.dueAllNow = db.prepare<[number]>(
      "UPDATE storefront_outbox SET next_attempt_at = ? WHERE abandoned_at IS NULL",
    );
  }

  /**
   * Opens (creating if needed) the order book in `path`, which may be ":memory:". With a rollback
   * journal, not WAL: in Azure the file lives on App Service's `/home`, a network share, where WAL's
   * shared memory does not work; a few writes per order need no more.
   */
  static open(path: string, logger: Logger): OrderBook {
    const db = openDatabase(path, { migrations: ORDER_BOOK_MIGRATIONS, journalMode: "DELETE" });
    return new OrderBook(db, logger);
  }

  /** Keeps the order and puts its message in the outbox, due at `dueAt` (epoch ms), in one transaction. */
  place(order: PlacedOrder, dueAt: number): void {
    const total = order.items.reduce((sum, line) => sum + line.quantity * line.unitPriceMinor, 0);
    const { message } = order;
    this.db.transaction(() => {
      this.insertOrder.run(
        order.orderId,
        order.customerId,
        order.placedAt,
        order.currency,
        JSON.stringify(order.items),
        total,
        message.messageId,
      );
      this.insertOutbox.run(order.orderId, JSON.stringify(message.body), message.subject ?? null, dueAt);
    })();
  }

  /**
   * Keeps a status message once; a status of an order this book never placed is not kept. A status is
   * the Scheduler's word that it has the order, so it also ends the order's stay in the outbox.
   */
  record(message: StatusMessage, receivedAt: string): RecordOutcome {
    return this.db.transaction((): RecordOutcome => {
      if (!this.orderExists.get(message.orderId)) return "unknownOrder";
      this.deleteOutbox.run(message.orderId);
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

  /** The order, or undefined; throws UnreadableRowError (logged) when its row does not read back. */
  get(orderId: string): OrderView | undefined {
    const row = this.orderRow.get(orderId);
    if (row === undefined) return undefined;
    const read = readOrderRow(orderId, row);
    if (!read.ok) throw this.unreadable(read.error);
    return this.viewOf(read.value);
  }

  /** The orders of `orderIds` this book holds, in the order asked; unknown and unreadable ones left out. */
  list(orderIds: readonly string[]): OrderView[] {
    return orderIds.flatMap((id) => {
      try {
        const view = this.get(id);
        return view ? [view] : [];
      } catch (error) {
        if (error instanceof UnreadableRowError) return [];
        throw error;
      }
    });
  }

  /** Up to `limit` messages of the outbox due by `now` (epoch ms), the longest due first. */
  dueSends(now: number, limit: number): OutboxEntry[] {
    return this.dueRows.all(now, limit).flatMap((row) => this.outboxEntryOf(row, now));
  }

  /** The order's message while it waits in the outbox (not given up on), or undefined. */
  pendingSend(orderId: string, now: number): OutboxEntry | undefined {
    const row = this.outboxRow.get(orderId);
    return row ? this.outboxEntryOf(row, now)[0] : undefined;
  }

  /** When the next message in the outbox falls due after `now` (epoch ms), or null when none does. */
  nextSendAfter(now: number): number | null {
    return this.nextDue.get(now)?.at ?? null;
  }

  /** The orders queue acknowledged the message: out of the outbox. */
  markSent(orderId: string): void {
    this.deleteOutbox.run(orderId);
  }

  deferSend(orderId: string, attempts: number, nextAttemptAt: number, error: string): void {
    this.deferOutbox.run(attempts, nextAttemptAt, error, orderId);
  }

  /** Stops resending: past the orders queue's duplicate-detection window, or unreadable. */
  abandonSend(orderId: string, attempts: number, at: string, error: string): void {
    this.abandonOutbox.run(attempts, at, error, orderId);
  }

  /** Makes every message still waiting due at `now`: after a restart, nothing waits out an old backoff. */
  sendAllNow(now: number): void {
    this.dueAllNow.run(now);
  }

  close(): void {
    this.db.close();
  }

  private outboxEntryOf(row: { order_id: string }, now: number): OutboxEntry[] {
    const read = readOutboxRow(row.order_id, row);
    if (read.ok) return [read.value];
    this.unreadable(read.error);
    // An entry that cannot be read cannot be sent: given up on at once, so it is reported once.
    this.abandonSend(row.order_id, 0, new Date(now).toISOString(), read.error.message);
    return [];
  }

  private viewOf(order: OrderRecord): OrderView {
    const statuses = this.statusRows
      .all(order.orderId)
      .flatMap((row) => {
        const read = readStatusRow(row.message_id, row);
        if (read.ok) return [read.value];
        this.unreadable(read.error);
        return [];
      })
      .sort(compareStatusPlaces);
    // The latest in the life of the order, whatever arrived last: the state never moves back.
    const current = statuses.at(-1) ?? null;
    const state: OrderState = current ? stateOfStatus(current.status) : "Submitted";
    const { orderId, placedAt, items, totalMinor, currency, delivery } = order;
    return {
      orderId,
      placedAt,
      items,
      totalMinor,
      currency,
      state,
      detail: detailOf(state, current, statuses),
      delivery,
      statuses,
    };
  }

  private unreadable(error: UnreadableRowError): UnreadableRowError {
    this.logger.error("storefront.orderBook.unreadableRow", {
      table: error.table,
      key: error.key,
      error: error.message,
    });
    return error;
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
