/**
 * The order book's schema, as an append-only list: a migration, once released, is never edited; a
 * change is a new entry, applied to a file that has not seen it when the storefront opens the book.
 */
import type { Migration } from "../src/adapters/sqlite/migrations.js";

export const ORDER_BOOK_MIGRATIONS: readonly Migration[] = [
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
  {
    // Orders placed before this migration were sent before they were kept (a failed send removed
    // them), so none of them needs a row here.
    version: 2,
    description: "storefront outbox: each placed order's message until the orders queue acknowledges it",
    sql: `
      CREATE TABLE storefront_outbox (
        order_id        TEXT PRIMARY KEY REFERENCES storefront_orders (order_id) ON DELETE CASCADE,
        body            TEXT NOT NULL,
        subject         TEXT,
        attempts        INTEGER NOT NULL,
        next_attempt_at INTEGER NOT NULL,
        last_error      TEXT,
        abandoned_at    TEXT
      ) STRICT;
      CREATE INDEX storefront_outbox_due ON storefront_outbox (next_attempt_at) WHERE abandoned_at IS NULL;`,
  },
];
