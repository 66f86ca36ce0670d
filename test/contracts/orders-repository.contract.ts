import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Order, type OrderItem, orderDifferences } from "../../src/domain/order.js";
import type { OrdersRepository } from "../../src/ports/orders-repository.js";

export interface OrdersRepositoryFixture {
  readonly repository: OrdersRepository;
  /** The same database through a second client/connection, when the adapter can open one. */
  readonly secondConnection?: () => Promise<OrdersRepository>;
  dispose(): Promise<void>;
}

/** Unique per call, so the cases hold even against a database shared between runs. */
function newOrder(overrides: Partial<Order> = {}): Order {
  return {
    orderId: `order-${randomUUID()}`,
    customerId: "customer-1",
    currency: "EUR",
    items: [
      { sku: "sku-b", quantity: 2, unitPriceMinor: 1_250 },
      { sku: "sku-a", quantity: 1, unitPriceMinor: 0 },
    ],
    ...overrides,
  };
}

/** The behaviour every OrdersRepository adapter must show. */
export function describeOrdersRepositoryContract(
  adapterName: string,
  createFixture: () => Promise<OrdersRepositoryFixture>,
): void {
  describe(`OrdersRepository contract: ${adapterName}`, () => {
    let fixture: OrdersRepositoryFixture;
    let repository: OrdersRepository;

    beforeEach(async () => {
      fixture = await createFixture();
      repository = fixture.repository;
    });

    afterEach(async () => {
      await fixture.dispose();
    });

    it("returns an inserted order unchanged, items in their submitted order", async () => {
      const order = newOrder();

      expect(await repository.insertIfAbsent(order)).toEqual({ inserted: true });

      expect(await repository.get(order.orderId)).toEqual(order);
    });

    it("keeps a 100-item order with the largest quantities and prices intact", async () => {
      const items: OrderItem[] = Array.from({ length: 100 }, (_, i) => ({
        sku: `sku-${99 - i}`,
        quantity: i === 0 ? 1_000 : i + 1,
        unitPriceMinor: i === 0 ? 100_000_000 : 100_000_000 - i,
      }));
      const order = newOrder({ items });

      await repository.insertIfAbsent(order);
      const stored = await repository.get(order.orderId);

      expect(stored).toEqual(order);
      expect(stored?.items.map((item) => item.sku)).toEqual(items.map((item) => item.sku));
      expect(stored?.items[0]).toStrictEqual({ sku: "sku-99", quantity: 1_000, unitPriceMinor: 100_000_000 });
    });

    it("does not overwrite an existing order and returns the stored one", async () => {
      const first = newOrder();
      const conflicting: Order = {
        ...first,
        customerId: "customer-2",
        items: [
          { sku: "sku-b", quantity: 2, unitPriceMinor: 1_250 },
          { sku: "sku-c", quantity: 3, unitPriceMinor: 7 },
        ],
      };
      await repository.insertIfAbsent(first);

      const result = await repository.insertIfAbsent(conflicting);

      expect(result).toEqual({ inserted: false, existing: first });
      expect(await repository.get(first.orderId)).toEqual(first);
      if (result.inserted) return;
      expect(orderDifferences(result.existing, conflicting)).toEqual([
        "customerId",
        "items[1].sku",
        "items[1].quantity",
        "items[1].unitPriceMinor",
      ]);
    });

    it("reports a true duplicate as not inserted with no differences", async () => {
      const order = newOrder();
      await repository.insertIfAbsent(order);

      const result = await repository.insertIfAbsent(structuredClone(order));

      expect(result.inserted).toBe(false);
      if (result.inserted) return;
      expect(orderDifferences(result.existing, order)).toEqual([]);
    });

    it("returns undefined for an unknown order id", async () => {
      expect(await repository.get(`order-${randomUUID()}`)).toBeUndefined();
    });

    it("inserts exactly one of two racing inserts of the same order id", async () => {
      const other = fixture.secondConnection ? await fixture.secondConnection() : repository;
      const a = newOrder({ customerId: "customer-a" });
      const b: Order = { ...a, customerId: "customer-b" };

      const results = await Promise.all([repository.insertIfAbsent(a), other.insertIfAbsent(b)]);

      const winners = results.filter((result) => result.inserted);
      expect(winners).toHaveLength(1);
      const winner = results[0]?.inserted ? a : b;
      const loser = results.find((result) => !result.inserted);
      expect(loser).toEqual({ inserted: false, existing: winner });
      expect(await repository.get(a.orderId)).toEqual(winner);
      expect(await other.get(a.orderId)).toEqual(winner);
    });
  });
}
