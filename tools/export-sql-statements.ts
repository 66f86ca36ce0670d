/**
 * Every T-SQL text the SQL adapter sends, with the parameters it declares for each. The adapter's own code
 * runs against a pool that records instead of connecting (migrations on an empty database, then an insert
 * and a read of an order), so the texts and parameter types are the ones that reach the server. Constants
 * of statements.ts that no code path sent are listed too, without parameters.
 */
import { createRequire } from "node:module";
import mssql from "mssql";
import { SqlOrdersRepository } from "../src/adapters/sql/sql-orders-repository.js";
import { applyMigrations } from "../src/adapters/sql/sql-pool.js";
import * as statements from "../src/adapters/sql/statements.js";
import type { Order } from "../src/domain/order.js";
import type { Clock } from "../src/ports/clock.js";

export interface ExportedStatement {
  /** The statements.ts export it comes from, e.g. `SELECT_ORDER` or `MIGRATIONS[version 1]`. */
  readonly name: string;
  readonly sql: string;
  /** Parameter name (without `@`) to its T-SQL declaration, e.g. `orderId` to `nvarchar (64)`. */
  readonly parameters: Readonly<Record<string, string>>;
  /** Whether the adapter was seen sending it (false: exported by statements.ts, never sent here). */
  readonly sent: boolean;
}

interface MssqlTypeFactory {
  (...args: unknown[]): { type: unknown };
  readonly declaration?: string;
}
type DeclareType = (type: unknown, options: Record<string, unknown>) => string;

/** mssql's own rendering of a parameter type into a declaration (what it puts in sp_executesql). */
const { declare: declareType } = createRequire(import.meta.url)("mssql/lib/datatypes.js") as {
  declare: DeclareType;
};

function declaration(type: unknown): string {
  // mssql takes either a factory (mssql.BigInt) or what one returns (mssql.NVarChar(64)).
  const resolved = typeof type === "function" ? (type as MssqlTypeFactory)() : (type as { type: unknown });
  return declareType(resolved.type, resolved as Record<string, unknown>);
}

/** Names of the statements.ts exports, keyed by their text. */
function exportedTexts(): Map<string, string> {
  const byText = new Map<string, string>();
  for (const [name, value] of Object.entries(statements)) {
    if (typeof value === "string") byText.set(value, name);
    else if (Array.isArray(value)) {
      for (const migration of value as statements.Migration[]) {
        byText.set(migration.script, `${name}[version ${migration.version}]`);
      }
    }
  }
  return byText;
}

class RecordingRequest {
  private readonly parameters: Record<string, string> = {};

  constructor(
    private readonly sent: { sql: string; parameters: Record<string, string> }[],
    private readonly answer: (sql: string) => unknown[],
  ) {}

  input(name: string, type: unknown): this {
    this.parameters[name] = declaration(type);
    return this;
  }

  async query(sql: string) {
    this.sent.push({ sql, parameters: { ...this.parameters } });
    return { recordset: this.answer(sql), recordsets: [], rowsAffected: [], output: {} };
  }

  batch(sql: string) {
    return this.query(sql);
  }
}

async function recordSentStatements(): Promise<{ sql: string; parameters: Record<string, string> }[]> {
  const sent: { sql: string; parameters: Record<string, string> }[] = [];
  const answer = (sql: string): unknown[] =>
    sql === statements.INSERT_ORDER_IF_ABSENT
      ? [{ order_id: "ord-1", customer_id: "c-1", currency: "EUR", items: "[]", inserted: 1 }]
      : [];
  const request = () => new RecordingRequest(sent, answer);
  const pool = { request } as unknown as mssql.ConnectionPool;

  // applyMigrations opens an mssql.Transaction on the pool; here the transaction only hands out requests.
  const transaction = mssql.Transaction.prototype as unknown as Record<string, unknown>;
  const original = { begin: transaction.begin, commit: transaction.commit, request: transaction.request };
  Object.assign(transaction, { begin: async () => undefined, commit: async () => undefined, request });
  try {
    await applyMigrations(pool);
  } finally {
    Object.assign(transaction, original);
  }

  const clock: Clock = { now: () => new Date(0), sleep: async () => undefined };
  const repository = new SqlOrdersRepository(pool, clock);
  const order: Order = {
    orderId: "ord-1",
    customerId: "c-1",
    currency: "EUR",
    items: [{ sku: "S-1", quantity: 1, unitPriceMinor: 500 }],
  };
  await repository.insertIfAbsent(order);
  await repository.get("ord-1");
  return sent;
}

export async function exportSqlStatements(): Promise<ExportedStatement[]> {
  const names = exportedTexts();
  const result: ExportedStatement[] = [];
  const seen = new Set<string>();
  for (const { sql, parameters } of await recordSentStatements()) {
    if (seen.has(sql)) continue;
    seen.add(sql);
    result.push({ name: names.get(sql) ?? "<not in statements.ts>", sql, parameters, sent: true });
  }
  for (const [sql, name] of names) {
    if (!seen.has(sql)) result.push({ name, sql, parameters: {}, sent: false });
  }
  return result;
}
