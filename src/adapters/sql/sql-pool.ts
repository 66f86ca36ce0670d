import mssql from "mssql";
import {
  CREATE_SCHEMA_VERSION_TABLE,
  INSERT_SCHEMA_VERSION,
  LOCK_SCHEMA_FOR_MIGRATION,
  MIGRATIONS,
  type Migration,
  SELECT_SCHEMA_VERSIONS,
} from "./statements.js";

/** How to reach the orders database: a connection string (local SQL Server), or Azure SQL with Entra authentication. */
export type SqlConnection =
  | { readonly kind: "connectionString"; readonly connectionString: string }
  | {
      readonly kind: "entra";
      readonly server: string;
      readonly database: string;
      readonly clientId?: string;
    };

export function sqlPoolConfig(connection: SqlConnection): string | mssql.config {
  if (connection.kind === "connectionString") return connection.connectionString;
  return {
    server: connection.server,
    database: connection.database,
    authentication: {
      type: "azure-active-directory-default",
      options: connection.clientId ? { clientId: connection.clientId } : {},
    },
    options: { encrypt: true },
  };
}

/** A connected pool; close it when done. */
export async function openSqlPool(connection: SqlConnection): Promise<mssql.ConnectionPool> {
  return new mssql.ConnectionPool(sqlPoolConfig(connection)).connect();
}

/**
 * Brings the schema up to date in one transaction under an exclusive application lock, so hosts that
 * start together apply each migration once. Returns the versions it applied.
 */
export async function applyMigrations(
  pool: mssql.ConnectionPool,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const transaction = new mssql.Transaction(pool);
  await transaction.begin();
  try {
    await transaction.request().batch(LOCK_SCHEMA_FOR_MIGRATION);
    await transaction.request().batch(CREATE_SCHEMA_VERSION_TABLE);
    const { recordset } = await transaction.request().query<{ version: number }>(SELECT_SCHEMA_VERSIONS);
    const applied = new Set(recordset.map((row) => row.version));
    const appliedNow: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      await transaction.request().batch(migration.script);
      await transaction
        .request()
        .input("version", mssql.Int, migration.version)
        .input("description", mssql.NVarChar(200), migration.description)
        .query(INSERT_SCHEMA_VERSION);
      appliedNow.push(migration.version);
    }
    await transaction.commit();
    return appliedNow;
  } catch (error) {
    await transaction.rollback().catch(() => undefined);
    throw error;
  }
}
