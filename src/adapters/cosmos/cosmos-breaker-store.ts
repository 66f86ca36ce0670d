import type { Container, ItemDefinition } from "@azure/cosmos";
import { checkedBreakerState } from "../../domain/breaker-state-schema.js";
import type { BreakerState } from "../../domain/circuit-breaker.js";
import type {
  BreakerStore,
  BreakerWrite,
  StoredBreaker,
  StoredBreakerEntry,
} from "../../ports/breaker-store.js";
import { statusOf } from "./cosmos-errors.js";

/**
 * The partition the breakers share in the state container. Order ids are letters, digits and `-_.:`
 * (domain/order.ts), so no order's record or tombstone can be in a partition named with `#`; one
 * partition for all breakers lets `readAll` read them in one single-partition query.
 */
export const BREAKER_PARTITION = "#breakers";

/** The document of an operation's breaker, in `BREAKER_PARTITION`. */
export function breakerId(operation: string): string {
  return `breaker:${operation}`;
}

/**
 * A breaker as the state container holds it. Like a tombstone (retired-orders.ts) it is never a record:
 * it has none of the fields the queries of records filter or sort on (`processState`, `lockedBy`,
 * `notBefore`, `completeBy`, `updatedAt`, `workflowVersion`), so none of them matches it, and no `ttl`,
 * so it never expires. Only its `orderId`, the partition key, is indexed.
 */
interface BreakerDocument extends ItemDefinition {
  readonly id: string;
  readonly orderId: typeof BREAKER_PARTITION;
  readonly operation: string;
  readonly breaker: BreakerState;
}

/**
 * The circuit breakers on Cosmos DB, in the state container beside the records: one document per
 * operation, replaced on its ETag (`IfMatch`), so concurrent writers from any instance lose cleanly.
 */
export class CosmosBreakerStore implements BreakerStore {
  constructor(private readonly container: Container) {}

  async read(operation: string): Promise<StoredBreaker | undefined> {
    const { resource } = await this.container.item(breakerId(operation), BREAKER_PARTITION).read();
    return resource === undefined ? undefined : stored(resource).breaker;
  }

  async write(
    operation: string,
    state: BreakerState,
    expectedVersion: string | undefined,
  ): Promise<BreakerWrite> {
    const document: BreakerDocument = {
      id: breakerId(operation),
      orderId: BREAKER_PARTITION,
      operation,
      breaker: state,
    };
    try {
      const response =
        expectedVersion === undefined
          ? await this.container.items.create(document, { disableAutomaticIdGeneration: true })
          : await this.container
              .item(document.id, BREAKER_PARTITION)
              .replace(document, { accessCondition: { type: "IfMatch", condition: expectedVersion } });
      const version = response.etag ?? response.resource?._etag;
      if (!version) throw new Error(`circuit breaker of ${operation}: the write answered no ETag`);
      return { written: true, version };
    } catch (error) {
      const status = statusOf(error);
      // 409: created meanwhile; 412: replaced meanwhile; 404: none to replace.
      if (status === 409 || status === 412 || status === 404) return { written: false };
      throw error;
    }
  }

  async readAll(): Promise<readonly StoredBreakerEntry[]> {
    const { resources } = await this.container.items
      .query(
        {
          query: "SELECT * FROM c WHERE c.orderId = @partition",
          parameters: [{ name: "@partition", value: BREAKER_PARTITION }],
        },
        { partitionKey: BREAKER_PARTITION },
      )
      .fetchAll();
    return resources
      .map((resource) => stored(resource))
      .map(({ operation, breaker }) => ({ operation, ...breaker }))
      .sort((a, b) => (a.operation < b.operation ? -1 : a.operation > b.operation ? 1 : 0));
  }
}

function stored(resource: unknown): { readonly operation: string; readonly breaker: StoredBreaker } {
  const document = resource as Partial<BreakerDocument> & { _etag?: unknown };
  const { operation, _etag } = document;
  if (typeof operation !== "string" || typeof _etag !== "string" || document.id !== breakerId(operation)) {
    throw new Error(`circuit breaker document ${String(document.id)} is not { id, operation, breaker }`);
  }
  const state = checkedBreakerState(document.breaker, `circuit breaker of ${operation}`);
  return { operation, breaker: { state, version: _etag } };
}
