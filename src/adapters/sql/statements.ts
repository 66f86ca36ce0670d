/**
 * Every T-SQL statement the SQL adapters send, in one module so that a test can parse them all. Orders are
 * immutable: no statement here updates or deletes an order.
 */

const MIGRATION_LOCK = "sas-orders-schema";

/**
 * Serialises concurrent migrators (two hosts starting at once) for the life of the migration transaction.
 * sp_getapplock reports a timeout only in its return code, so the batch checks the lock it holds instead.
 */
export const LOCK_SCHEMA_FOR_MIGRATION = `
EXEC sp_getapplock @Resource = N'${MIGRATION_LOCK}', @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = 60000;
IF APPLOCK_MODE(N'public', N'${MIGRATION_LOCK}', N'Transaction') <> N'Exclusive'
  THROW 50000, N'timed out waiting for the orders schema migration lock', 1;
`;

export const CREATE_SCHEMA_VERSION_TABLE = `
IF OBJECT_ID(N'dbo.schema_version', N'U') IS NULL
  CREATE TABLE dbo.schema_version (
    version INT NOT NULL CONSTRAINT pk_schema_version PRIMARY KEY,
    description NVARCHAR(200) NOT NULL,
    applied_at DATETIME2(3) NOT NULL CONSTRAINT df_schema_version_applied_at DEFAULT SYSUTCDATETIME()
  );
`;

export const SELECT_SCHEMA_VERSIONS = "SELECT version FROM dbo.schema_version ORDER BY version;";

export const INSERT_SCHEMA_VERSION =
  "INSERT INTO dbo.schema_version (version, description) VALUES (@version, @description);";

/**
 * One row per order. Ids are compared byte for byte (a BIN2 collation): `ord-A` and `ord-a` are two
 * orders, as they are everywhere else. The lines are one JSON array: they are written and read only
 * with their order, never queried on their own.
 */
export const MIGRATION_001_ORDERS = `
CREATE TABLE dbo.orders (
  order_id NVARCHAR(64) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT pk_orders PRIMARY KEY,
  customer_id NVARCHAR(64) NOT NULL,
  currency CHAR(3) NOT NULL,
  total_minor BIGINT NOT NULL,
  items NVARCHAR(MAX) NOT NULL CONSTRAINT ck_orders_items_json CHECK (ISJSON(items) = 1),
  created_at DATETIME2(3) NOT NULL
);
`;

export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly script: string;
}

/** Applied in order, each once, each in the migration transaction; never edit one that has shipped. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: "orders", script: MIGRATION_001_ORDERS },
];

/**
 * Inserts the order unless its id exists, then reads the stored row with a flag saying whether this
 * batch wrote it: one round trip either way, and no reliance on row counts (which NOCOUNT hides).
 * UPDLOCK + HOLDLOCK lock the key range even when the row is absent, so a racing insert of the same id
 * waits for this one to commit and then inserts nothing.
 */
export const INSERT_ORDER_IF_ABSENT = `
DECLARE @inserted INT;
INSERT INTO dbo.orders (order_id, customer_id, currency, total_minor, items, created_at)
SELECT @orderId, @customerId, @currency, @totalMinor, @items, @createdAt
WHERE NOT EXISTS (SELECT 1 FROM dbo.orders WITH (UPDLOCK, HOLDLOCK) WHERE order_id = @orderId);
SET @inserted = @@ROWCOUNT;
SELECT order_id, customer_id, currency, items, @inserted AS inserted FROM dbo.orders WHERE order_id = @orderId;
`;

export const SELECT_ORDER =
  "SELECT order_id, customer_id, currency, items FROM dbo.orders WHERE order_id = @orderId;";
