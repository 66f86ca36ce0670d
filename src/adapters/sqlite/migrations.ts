/**
 * The embedded database's schema, as an append-only list: a migration, once released, is never
 * edited; a change is a new entry. `openDatabase` applies whatever a file has not seen yet.
 */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "state store, orders, queues, leases",
    sql: `
      CREATE TABLE state_records (
        order_id      TEXT PRIMARY KEY,
        etag          TEXT NOT NULL,
        process_state TEXT NOT NULL,
        locked_by     TEXT,
        complete_by   TEXT,
        not_before    TEXT NOT NULL,
        document      TEXT NOT NULL
      );
      CREATE INDEX state_records_claimable ON state_records (process_state, not_before, order_id);
      CREATE INDEX state_records_expiring ON state_records (process_state, complete_by, order_id);

      CREATE TABLE orders (
        order_id    TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL,
        currency    TEXT NOT NULL,
        total_minor INTEGER NOT NULL,
        created_at  TEXT NOT NULL
      );
      CREATE TABLE order_items (
        order_id         TEXT NOT NULL REFERENCES orders (order_id),
        line_no          INTEGER NOT NULL,
        sku              TEXT NOT NULL,
        quantity         INTEGER NOT NULL,
        unit_price_minor INTEGER NOT NULL,
        PRIMARY KEY (order_id, line_no)
      );

      CREATE TABLE queue_messages (
        sequence_number         INTEGER PRIMARY KEY AUTOINCREMENT,
        queue                   TEXT NOT NULL,
        message_id              TEXT NOT NULL,
        body                    TEXT NOT NULL,
        correlation_id          TEXT,
        subject                 TEXT,
        application_properties  TEXT NOT NULL,
        enqueued_at             INTEGER NOT NULL,
        available_at            INTEGER NOT NULL,
        delivery_count          INTEGER NOT NULL DEFAULT 0,
        lock_token              TEXT,
        locked_until            INTEGER,
        dead_letter_reason      TEXT,
        dead_letter_description TEXT
      );
      CREATE INDEX queue_messages_ready ON queue_messages (queue, available_at, sequence_number);
      CREATE TABLE queue_message_ids (
        queue       TEXT NOT NULL,
        message_id  TEXT NOT NULL,
        enqueued_at INTEGER NOT NULL,
        PRIMARY KEY (queue, message_id)
      );

      CREATE TABLE leases (
        name       TEXT PRIMARY KEY,
        lease_id   TEXT NOT NULL,
        holder     TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: "local durable runtime: instances, history, inbox, activity and timer work",
    sql: `
      CREATE TABLE df_instances (
        instance_id   TEXT PRIMARY KEY,
        execution_id  TEXT NOT NULL,
        name          TEXT NOT NULL,
        status        TEXT NOT NULL,
        input         TEXT,
        output        TEXT,
        failure       TEXT,
        custom_status TEXT,
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL
      );
      CREATE TABLE df_history (
        instance_id TEXT NOT NULL,
        episode     INTEGER NOT NULL,
        events      TEXT NOT NULL,
        PRIMARY KEY (instance_id, episode)
      );
      CREATE TABLE df_inbox (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        instance_id  TEXT NOT NULL,
        execution_id TEXT NOT NULL,
        event        TEXT NOT NULL
      );
      CREATE INDEX df_inbox_instance ON df_inbox (instance_id, id);
      CREATE TABLE df_activities (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        instance_id  TEXT NOT NULL,
        execution_id TEXT NOT NULL,
        task_id      INTEGER NOT NULL,
        name         TEXT NOT NULL,
        input        TEXT
      );
      CREATE INDEX df_activities_instance ON df_activities (instance_id);
      CREATE TABLE df_timers (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        instance_id  TEXT NOT NULL,
        execution_id TEXT NOT NULL,
        timer_id     INTEGER NOT NULL,
        fire_at      INTEGER NOT NULL
      );
      CREATE INDEX df_timers_instance ON df_timers (instance_id, timer_id);
    `,
  },
  {
    version: 3,
    description: "claimable records include compensations handed back for another attempt",
    sql: `
      DROP INDEX state_records_claimable;
      CREATE INDEX state_records_claimable ON state_records (not_before, order_id)
        WHERE locked_by IS NULL AND process_state IN ('Pending', 'Compensating');
    `,
  },
  {
    version: 4,
    description: "expired records in deadline order from an index that holds only owned records",
    sql: `
      CREATE INDEX state_records_expired ON state_records (complete_by, order_id)
        WHERE process_state IN ('Processing', 'Compensating') AND complete_by IS NOT NULL;
    `,
  },
  {
    version: 5,
    description: "state store: the time of each record's last change, for the operator's newest-first list",
    sql: `
      ALTER TABLE state_records ADD COLUMN updated_at TEXT;
      UPDATE state_records SET updated_at = json_extract(document, '$.updatedAt');
      CREATE INDEX state_records_recent ON state_records (updated_at DESC, order_id DESC);
      CREATE INDEX state_records_recent_by_state ON state_records (process_state, updated_at DESC, order_id DESC);
    `,
  },
  {
    version: 6,
    description: "the Supervisor's last scan, for the operator's statistics",
    sql: `
      CREATE TABLE supervisor_last_scan (
        id   INTEGER PRIMARY KEY CHECK (id = 1),
        scan TEXT NOT NULL
      );
    `,
  },
  {
    version: 7,
    description:
      "state store: drop the (process_state, complete_by) index: the expired index serves the Supervisor and " +
      "the by-state index the counts, and every record write paid to keep it",
    sql: `
      DROP INDEX IF EXISTS state_records_expiring;
    `,
  },
  {
    version: 8,
    description:
      "local durable runtime: a sub-orchestration's parent (instance, execution and the task that waits for it)",
    sql: `
      ALTER TABLE df_instances ADD COLUMN parent_instance_id TEXT;
      ALTER TABLE df_instances ADD COLUMN parent_execution_id TEXT;
      ALTER TABLE df_instances ADD COLUMN parent_task_id INTEGER;
    `,
  },
  {
    version: 9,
    description: "local durable runtime: durable entities' state, and the operations waiting for each",
    sql: `
      CREATE TABLE df_entities (
        entity_id  TEXT PRIMARY KEY,
        state      TEXT,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE df_entity_requests (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        entity_id TEXT NOT NULL,
        request   TEXT NOT NULL
      );
      CREATE INDEX df_entity_requests_entity ON df_entity_requests (entity_id, id);
    `,
  },
  {
    version: 10,
    description:
      "state store: the tombstone of each order whose record retention deleted, so a resend is not run again",
    sql: `
      CREATE TABLE retired_orders (
        order_id    TEXT PRIMARY KEY,
        final_state TEXT NOT NULL,
        attempt     INTEGER NOT NULL,
        retired_at  TEXT NOT NULL,
        purged_at   TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 11,
    description: "the circuit breaker of each partner operation, shared by every Agent",
    sql: `
      CREATE TABLE breakers (
        operation TEXT PRIMARY KEY,
        version   INTEGER NOT NULL,
        state     TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 12,
    description:
      "state store: when each record was accepted or last made progress, and the Pending records in that order, " +
      "for the operator's oldest waiting order (a record of schema version 2 has it as its upgrade derives it)",
    sql: `
      ALTER TABLE state_records ADD COLUMN progress_at TEXT;
      UPDATE state_records SET progress_at = COALESCE(
        json_extract(document, '$.progressAt'),
        (SELECT MAX(at) FROM (
          SELECT json_extract(document, '$.createdAt') AS at
          UNION ALL
          SELECT json_extract(step.value, '$.updatedAt') FROM json_each(document, '$.steps') AS step
            WHERE json_extract(step.value, '$.status') IN ('Completed', 'Compensated'))));
      CREATE INDEX state_records_pending_by_progress ON state_records (progress_at, order_id)
        WHERE process_state = 'Pending';
    `,
  },
  {
    version: 13,
    description:
      "state store: each tombstone keeps the replyTo its order was accepted with, so a resend naming another " +
      "queue is refused (reply_to_kept is 0 on the tombstones written before: their replyTo is unknown)",
    sql: `
      ALTER TABLE retired_orders ADD COLUMN reply_to TEXT;
      ALTER TABLE retired_orders ADD COLUMN reply_to_kept INTEGER NOT NULL DEFAULT 0;
    `,
  },
];
