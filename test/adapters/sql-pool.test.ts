import { describe, expect, it } from "vitest";
import { sqlConnectionFromSettings, sqlPoolConfig } from "../../src/adapters/sql/sql-pool.js";

describe("orders database connection", () => {
  const local = "Server=localhost,1433;Database=orders;User Id=sa;Password=x;TrustServerCertificate=true";

  it("uses a connection string when one is set, before server and database", () => {
    const connection = sqlConnectionFromSettings({
      OrdersDb: local,
      OrdersDb__server: "sas.database.windows.net",
      OrdersDb__database: "orders",
    });

    expect(connection).toEqual({ kind: "connectionString", connectionString: local });
    expect(sqlPoolConfig(connection)).toBe(local);
  });

  it("connects to Azure SQL with Entra authentication from server and database", () => {
    const connection = sqlConnectionFromSettings({
      OrdersDb: "",
      OrdersDb__server: "sas.database.windows.net",
      OrdersDb__database: "orders",
    });

    expect(sqlPoolConfig(connection)).toEqual({
      server: "sas.database.windows.net",
      database: "orders",
      authentication: { type: "azure-active-directory-default", options: {} },
      options: { encrypt: true },
    });
  });

  it("names a user-assigned identity by its client id", () => {
    const connection = sqlConnectionFromSettings(
      { Sql__server: "s", Sql__database: "d", Sql__clientId: "11111111-2222-3333-4444-555555555555" },
      "Sql",
    );

    expect(sqlPoolConfig(connection)).toMatchObject({
      authentication: { options: { clientId: "11111111-2222-3333-4444-555555555555" } },
    });
  });

  it.each([{}, { OrdersDb__server: "s" }, { OrdersDb__database: "d" }])(
    "names the settings it looked for when %o is all there is",
    (settings) => {
      expect(() => sqlConnectionFromSettings(settings)).toThrow(
        /OrdersDb to a connection string, or both OrdersDb__server and OrdersDb__database/,
      );
    },
  );
});
