import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { SqliteOrdersRepository } from "../../laptop/sqlite/sqlite-orders-repository.js";
import { type EmbeddedDatabase, openDatabase } from "../../src/adapters/sqlite/database.js";
import type { Order } from "../../src/domain/order.js";
import { describeOrdersRepositoryContract } from "../contracts/orders-repository.contract.js";

interface TemporaryDatabase {
  readonly clock: VirtualClock;
  connect(): { db: EmbeddedDatabase; repository: SqliteOrdersRepository };
  dispose(): void;
}

function temporaryDatabase(): TemporaryDatabase {
  const directory = mkdtempSync(join(tmpdir(), "sas-orders-"));
  const path = join(directory, "embedded.db");
  const clock = new VirtualClock();
  const connections: EmbeddedDatabase[] = [];
  return {
    clock,
    connect() {
      const db = openDatabase(path);
      connections.push(db);
      return { db, repository: new SqliteOrdersRepository(db, clock) };
    },
    dispose() {
      for (const db of connections) db.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

describeOrdersRepositoryContract("SqliteOrdersRepository", async () => {
  const database = temporaryDatabase();
  return {
    repository: database.connect().repository,
    // A real second connection to the same file, as a second process would have.
    secondConnection: async () => database.connect().repository,
    async dispose() {
      database.dispose();
    },
  };
});

describe("SqliteOrdersRepository rows", () => {
  let database: TemporaryDatabase;

  beforeEach(() => {
    database = temporaryDatabase();
  });

  afterEach(() => {
    database.dispose();
  });

  it("stores the total, the creation time from the clock and numbered lines", async () => {
    const { db, repository } = database.connect();
    const order: Order = {
      orderId: "order-1",
      customerId: "customer-1",
      currency: "EUR",
      items: [
        { sku: "sku-b", quantity: 1_000, unitPriceMinor: 100_000_000 },
        { sku: "sku-a", quantity: 3, unitPriceMinor: 7 },
      ],
    };
    await database.clock.advance(1_234);

    await repository.insertIfAbsent(order);

    expect(db.prepare("SELECT total_minor, created_at FROM orders").all()).toEqual([
      { total_minor: 100_000_000_021, created_at: "2026-01-01T00:00:01.234Z" },
    ]);
    expect(db.prepare("SELECT line_no, sku FROM order_items ORDER BY line_no").all()).toEqual([
      { line_no: 1, sku: "sku-b" },
      { line_no: 2, sku: "sku-a" },
    ]);
  });

  it("writes nothing for an order whose id exists", async () => {
    const { db, repository } = database.connect();
    const order: Order = {
      orderId: "order-1",
      customerId: "customer-1",
      currency: "EUR",
      items: [{ sku: "sku-a", quantity: 1, unitPriceMinor: 5 }],
    };
    await repository.insertIfAbsent(order);

    await repository.insertIfAbsent({
      ...order,
      items: [...order.items, { sku: "sku-b", quantity: 1, unitPriceMinor: 1 }],
    });

    expect(db.prepare("SELECT COUNT(*) AS n FROM order_items").get()).toEqual({ n: 1 });
  });
});
