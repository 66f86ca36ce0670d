import { describe, expect, it } from "vitest";
import { sqlPoolConfig } from "../../src/adapters/sql/sql-pool.js";

describe("orders database connection", () => {
  it("passes a connection string through as it is", () => {
    const local = "Server=localhost,1433;Database=orders;User Id=sa;Password=x;TrustServerCertificate=true";
    expect(sqlPoolConfig({ kind: "connectionString", connectionString: local })).toBe(local);
  });

  it("connects to Azure SQL with Entra authentication, encrypted", () => {
    expect(sqlPoolConfig({ kind: "entra", server: "sas.database.windows.net", database: "orders" })).toEqual({
      server: "sas.database.windows.net",
      database: "orders",
      authentication: { type: "azure-active-directory-default", options: {} },
      options: { encrypt: true },
    });
  });

  it("names a user-assigned identity by its client id", () => {
    const config = sqlPoolConfig({
      kind: "entra",
      server: "s",
      database: "d",
      clientId: "11111111-2222-3333-4444-555555555555",
    });
    expect(config).toMatchObject({
      authentication: { options: { clientId: "11111111-2222-3333-4444-555555555555" } },
    });
  });
});
