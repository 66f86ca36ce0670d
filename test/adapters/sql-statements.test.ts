import { init, parse, type Statement } from "@guanmingchiu/sqlparser-ts";
import { beforeAll, describe, expect, it } from "vitest";
import * as statements from "../../src/adapters/sql/statements.js";

/** Every T-SQL text the module exports: each string constant, and each migration's script. */
const TEXTS: [string, string][] = Object.entries(statements).flatMap(([name, value]): [string, string][] => {
  if (typeof value === "string") return [[name, value]];
  if (Array.isArray(value)) {
    return value.map((migration: statements.Migration): [string, string] => [
      `${name}[version ${migration.version}]`,
      migration.script,
    ]);
  }
  return [];
});

const tsql = (sql: string): Statement[] => parse(sql, "mssql");

/** The kinds of statement in a parsed batch, e.g. ["Declare", "Insert", ...]. */
const kinds = (sql: string): string[] => tsql(sql).flatMap((statement) => Object.keys(statement));

beforeAll(async () => {
  await init();
});

describe("T-SQL statements", () => {
  it("finds every exported statement and migration", () => {
    expect(TEXTS.map(([name]) => name).sort()).toEqual([
      "CREATE_SCHEMA_VERSION_TABLE",
      "INSERT_ORDER_IF_ABSENT",
      "INSERT_SCHEMA_VERSION",
      "LOCK_SCHEMA_FOR_MIGRATION",
      "MIGRATIONS[version 1]",
      "MIGRATION_001_ORDERS",
      "SELECT_ORDER",
      "SELECT_SCHEMA_VERSIONS",
    ]);
  });

  it.each(TEXTS)("%s parses as T-SQL", (_name, sql) => {
    expect(tsql(sql).length).toBeGreaterThan(0);
  });

  it.each([
    ["a misspelt keyword", "SELEC order_id FROM dbo.orders WHERE order_id = @orderId;"],
    ["an unclosed subquery", statements.INSERT_ORDER_IF_ABSENT.replace("@orderId);", "@orderId;")],
    ["a missing column list", statements.MIGRATION_001_ORDERS.replace("dbo.orders (", "dbo.orders ")],
    ["a dangling WHERE", statements.SELECT_ORDER.replace("order_id = @orderId", "")],
  ])("rejects T-SQL with %s", (_defect, sql) => {
    expect(() => tsql(sql)).toThrow(/sql parser error/);
  });

  it("numbers the migrations 1, 2, ... with nothing edited out of order", () => {
    expect(statements.MIGRATIONS.map((migration) => migration.version)).toEqual(
      statements.MIGRATIONS.map((_, index) => index + 1),
    );
  });

  it("creates the orders table keyed by order id, and the schema-version table only when absent", () => {
    const [orders] = tsql(statements.MIGRATION_001_ORDERS);
    expect(JSON.stringify(orders)).toMatch(/"CreateTable".*"value":"orders"/);
    expect(statements.MIGRATION_001_ORDERS).toMatch(
      /order_id NVARCHAR\(64\) COLLATE \w+_BIN2 NOT NULL .*PRIMARY KEY/,
    );
    expect(kinds(statements.CREATE_SCHEMA_VERSION_TABLE)).toEqual(["If"]);
  });

  it("locks the key range in the insert's existence check, so racing inserts serialise", () => {
    expect(kinds(statements.INSERT_ORDER_IF_ABSENT)).toEqual(["Declare", "Insert", "Set", "Query"]);
    const hints = JSON.stringify(tsql(statements.INSERT_ORDER_IF_ABSENT)[1]).match(/"with_hints":\[[^\]]*\]/);
    expect(hints?.[0]).toContain('"UPDLOCK"');
    expect(hints?.[0]).toContain('"HOLDLOCK"');
  });

  it("never updates or deletes an order", () => {
    const all = TEXTS.flatMap(([, sql]) => kinds(sql));
    expect(all).not.toContain("Update");
    expect(all).not.toContain("Delete");
    expect(all).not.toContain("Merge");
  });
});
