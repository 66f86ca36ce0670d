import { VirtualClock } from "../../src/adapters/clock/virtual-clock.js";
import type { Logger } from "../../src/ports/logger.js";
import type { StateStore } from "../../src/ports/state-store.js";
import { createOperatorCommands } from "../../src/scheduler/operator-commands.js";
import type { OrdersApiBackend } from "../../src/scheduler/orders-api.js";

/** The orders API over a bare state store: every route but submission, with MAX_IN_FLIGHT 200. */
export function storeBackend(states: StateStore, logger: Logger): OrdersApiBackend {
  return {
    post: () => Promise.reject(new Error("submission is not part of this backend")),
    getRecord: (orderId) => states.get(orderId),
    listRecords: (query) => states.listRecent(query),
    countByState: () => states.countByState(),
    countPending: () => states.countInState("Pending"),
    operator: createOperatorCommands({ states, clock: new VirtualClock(), logger }),
    maxInFlight: 200,
    maxPending: 10_000,
  };
}
