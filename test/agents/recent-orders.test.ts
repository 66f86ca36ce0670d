import { describe, expect, it } from "vitest";
import { recentOrders } from "../../src/agents/recent-orders.js";
import { sampleOrder } from "../support/records.js";

function countingOrders(ids: readonly string[]) {
  const reads: string[] = [];
  return {
    reads,
    get: async (orderId: string) => {
      reads.push(orderId);
      return ids.includes(orderId) ? sampleOrder(orderId) : undefined;
    },
  };
}

describe("recentOrders", () => {
  it("reads an order once while it is kept, and again once newer ones pushed it out", async () => {
    const store = countingOrders(["a", "b", "c"]);
    const orders = recentOrders(store, 2);
    expect((await orders.get("a"))?.orderId).toBe("a");
    expect((await orders.get("a"))?.orderId).toBe("a");
    await orders.get("b");
    await orders.get("c");
    await orders.get("b");
    await orders.get("a");
    expect(store.reads).toEqual(["a", "b", "c", "a"]);
  });

  it("does not keep an order it did not find, so one written later is found", async () => {
    const ids: string[] = [];
    const store = countingOrders(ids);
    const orders = recentOrders(store);
    expect(await orders.get("late")).toBeUndefined();
    ids.push("late");
    expect((await orders.get("late"))?.orderId).toBe("late");
    expect(store.reads).toEqual(["late", "late"]);
  });
});
