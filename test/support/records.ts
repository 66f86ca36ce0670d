import { orderFromMessage } from "../../src/domain/order.js";
import { newPendingRecord, type StateRecord } from "../../src/domain/state-record.js";
import type { RecoveryPolicy } from "../../src/domain/transition-commands.js";

export const T0 = "2026-01-01T00:00:00.000Z";

/** A recovery policy for the domain's tests: three recoveries, backoff from 100 ms to 5 s, then 20 s. */
export const RECOVERY_POLICY: RecoveryPolicy = {
  maxRecoveries: 3,
  backoff: { baseMs: 100, capMs: 5_000 },
  extendedBackoffAfter: 2,
  extendedDelayMs: 20_000,
  onExhausted: "error",
};

export function sampleOrder(orderId = "ord-1") {
  return orderFromMessage({
    schemaVersion: 1,
    orderId,
    customerId: "cust-1",
    currency: "EUR",
    items: [{ sku: "SKU-1", quantity: 2, unitPriceMinor: 1299 }],
  });
}

export function pendingRecord(orderId = "ord-1", overrides: Partial<StateRecord> = {}): StateRecord {
  return {
    ...newPendingRecord({
      order: sampleOrder(orderId),
      replyTo: "status-test",
      now: T0,
      retryBudgetLimit: 30,
      undoReserve: 0,
    }),
    ...overrides,
  };
}
