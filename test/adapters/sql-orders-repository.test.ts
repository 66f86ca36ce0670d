import mssql from "mssql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqlOrdersRepository } from "../../src/adapters/sql/sql-orders-repository.js";
import { applyMigrations, openSqlPool, type SqlConnection } from "../../src/adapters/sql/sql-pool.js";
import {
  INSERT_ORDER_IF_ABSENT,
  MIGRATIONS,
  SELECT_ORDER,
  SELECT_SCHEMA_VERSIONS,
} from "../../src/adapters/sql/statements.js";
import type { Order } from "../../src/domain/order.js";
import { describeOrdersRepositoryContract } from "../contracts/orders-repository.contract.js";

const ORDER: Order = {
  orderId: "order-1",
  customerId: "customer-1",
  currency: "EUR",
  items: [
    { sku: "sku-b", quantity: 1_000, unitPriceMinor: 100_000_000 },
    { sku: "sku-a", quantity: 3, unitPriceMinor: 7 },
  ],
};

const storedRow = (order: Order, inserted?: number) => ({
  order_id: order.orderId,
  customer_id: order.customerId,
  currency: order.currency,
  items: JSON.stringify(order.items),
  ...(inserted === undefined ? {} : { inserted }),
});

interface Call {
  readonly sql: string;
  readonly inputs: Map<string, { type: unknown; value: unknown }>;
}

/** Stands in for a ConnectionPool: records each request and answers from a script. */
function recordingPool(answer: (call: Call) => Record<string, unknown>[]) {
  const calls: Call[] = [];
  const pool = {
    request() {
      const inputs = new Map<string, { type: unknown; value: unknown }>();
      const request = {
        input(name: string, type: unknown, value: unknown) {
          inputs.set(name, { type, value });
          return request;
        },
        async query(sql: string) {
          const call = { sql, inputs };
          calls.push(call);
          return { recordset: answer(call), recordsets: [], rowsAffected: [], output: {} };
        },
      };
      return request;
    },
  };
  return { pool: pool as unknown as mssql.ConnectionPool, calls };
}

/** The parameters a statement reads: every `@name` but the variables it declares and `@@` functions. */
function parametersOf(sql: string): string[] {
  const declared = new Set([...sql.matchAll(/DECLARE\s+@(\w+)/gi)].map((m) => m[1]));
  const used = [...sql.matchAll(/(?<![@\w])@(\w+)/g)].map((m) => m[1] as string);
  return [...new Set(used)].filter((name) => !declared.has(name)).sort();
}

describe("SqlOrdersRepository without a server", () => {
  it("binds exactly the parameters each statement reads", async () => {
    const { pool, calls } = recordingPool((call) => (call.sql === SELECT_ORDER ? [] : [storedRow(ORDER, 1)]));
    const repository = new SqlOrdersRepository(pool, new VirtualClock());

    await repository.insertIfAbsent(ORDER);
    await repository.get(ORDER.orderId);

    expect(calls.map((call) => call.sql)).toEqual([INSERT_ORDER_IF_ABSENT, SELECT_ORDER]);
    for (const call of calls) expect([...call.inputs.keys()].sort()).toEqual(parametersOf(call.sql));
  });

  it("writes the total in minor units, the lines as JSON and the creation time from the clock", async () => {
    const { pool, calls } = recordingPool(() => [storedRow(ORDER, 1)]);
    const clock = new VirtualClock();
    await clock.advance(1_234);

    await new SqlOrdersRepository(pool, clock).insertIfAbsent(ORDER);

    const inputs = calls[0]?.inputs;
    expect(inputs?.get("totalMinor")?.value).toBe(100_000_000_021);
    expect(JSON.parse(String(inputs?.get("items")?.value))).toEqual(ORDER.items);
    expect(inputs?.get("createdAt")?.value).toEqual(new Date("2026-01-01T00:00:01.234Z"));
  });

  it("reports an insert when the batch wrote the row, and the stored order when it did not", async () => {
    const stored: Order = { ...ORDER, customerId: "customer-2" };
    const wrote = recordingPool(() => [storedRow(ORDER, 1)]);
    const found = recordingPool(() => [storedRow(stored, 0)]);

    expect(await new SqlOrdersRepository(wrote.pool, new VirtualClock()).insertIfAbsent(ORDER)).toEqual({
      inserted: true,
    });
    expect(await new SqlOrdersRepository(found.pool, new VirtualClock()).insertIfAbsent(ORDER)).toEqual({
      inserted: false,
      existing: stored,
    });
  });

  it("reads the stored order after a duplicate-key error", async () => {
    const { pool } = recordingPool((call) => {
      if (call.sql === SELECT_ORDER) return [storedRow(ORDER)];
      const error = new mssql.RequestError("Violation of PRIMARY KEY constraint 'pk_orders'", "EREQUEST");
      error.number = 2627;
      throw error;
    });

    expect(await new SqlOrdersRepository(pool, new VirtualClock()).insertIfAbsent(ORDER)).toEqual({
      inserted: false,
      existing: ORDER,
    });
  });

  it("refuses a stored row whose lines are not order items", async () => {
    const { pool } = recordingPool(() => [{ ...storedRow(ORDER), items: '[{"sku":"sku-a"}]' }]);

    await expect(new SqlOrdersRepository(pool, new VirtualClock()).get(ORDER.orderId)).rejects.toThrow();
  });
});

const CONNECTION_STRING = process.env.SQL_TEST_CONNECTION_STRING?.trim() ?? "";
const SKIPPED = "skipped: SQL_TEST_CONNECTION_STRING is not set, and no SQL Server runs here";
if (!CONNECTION_STRING) console.info(`SqlOrdersRepository on SQL Server: ${SKIPPED}`);

describe.skipIf(!CONNECTION_STRING)(
  `SqlOrdersRepository on SQL Server${CONNECTION_STRING ? "" : ` (${SKIPPED})`}`,
  () => {
    const connection: SqlConnection = { kind: "connectionString", connectionString: CONNECTION_STRING };
    const clock = new VirtualClock();
    let pool: mssql.ConnectionPool;

    beforeAll(async () => {
      pool = await openSqlPool(connection);
      await applyMigrations(pool);
    }, 60_000);

    afterAll(async () => {
      await pool?.close();
    });

    // Order ids are unique per case, so the cases hold against a database kept between runs.
    describeOrdersRepositoryContract("SqlOrdersRepository", async () => {
      const extra: mssql.ConnectionPool[] = [];
      return {
        repository: new SqlOrdersRepository(pool, clock),
        secondConnection: async () => {
          const second = await openSqlPool(connection);
          extra.push(second);
          return new SqlOrdersRepository(second, clock);
        },
        async dispose() {
          await Promise.all(extra.map((second) => second.close()));
        },
      };
    });

    it("applies nothing again once up to date, also when two hosts migrate at once", async () => {
      const other = await openSqlPool(connection);
      try {
        const runs = await Promise.all([applyMigrations(pool), applyMigrations(other)]);
        expect(runs).toEqual([[], []]);
        const { recordset } = await pool.request().query<{ version: number }>(SELECT_SCHEMA_VERSIONS);
        expect(recordset.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
      } finally {
        await other.close();
      }
    });

    it("keeps order ids that differ only in case apart", async () => {
      const repository = new SqlOrdersRepository(pool, clock);
      const suffix = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const upper: Order = { ...ORDER, orderId: `ORDER-${suffix}` };
      const lower: Order = { ...ORDER, orderId: `order-${suffix}`, customerId: "customer-2" };

      expect(await repository.insertIfAbsent(upper)).toEqual({ inserted: true });
      expect(await repository.insertIfAbsent(lower)).toEqual({ inserted: true });
      expect(await repository.get(lower.orderId)).toEqual(lower);
    });
  },
);
