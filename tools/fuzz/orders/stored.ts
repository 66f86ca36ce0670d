import type { Order } from "../../../src/domain/order.js";
import type { StoredStateRecord } from "../../../src/domain/state-record.js";
import type { OrdersRepository } from "../../../src/ports/orders-repository.js";
import type { StateReadModel } from "../../../src/ports/state-read-model.js";
import type { StateStore } from "../../../src/ports/state-store.js";
import type { WriteLog } from "../write-log.js";

/** The stores an order ends up in, and the log of every write made to them. */
export interface OrderStores {
  readonly states: StateStore & StateReadModel;
  readonly orders: OrdersRepository;
  readonly writes: WriteLog;
}

/** What the stores hold for one order id, and the same as text for a byte-for-byte comparison. */
export interface Stored {
  readonly record: StoredStateRecord | undefined;
  readonly order: Order | undefined;
  readonly text: string;
}

export async function readStored(stores: OrderStores, orderId: string): Promise<Stored> {
  const [record, order] = await Promise.all([stores.states.get(orderId), stores.orders.get(orderId)]);
  return { record, order, text: JSON.stringify({ record: record ?? null, order: order ?? null }) };
}

/** How many state records the store holds, over every process state. */
export async function recordCount(states: StateReadModel): Promise<number> {
  const counts = await states.countByState();
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}
