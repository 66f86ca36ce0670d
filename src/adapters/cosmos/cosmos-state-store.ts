import { performance } from "node:perf_hooks";
import type { Container, SqlParameter } from "@azure/cosmos";
import { err, ok, type Result } from "../../domain/result.js";
import type { StateRecord, StoredStateRecord } from "../../domain/state-record.js";
import {
  type ClaimableQuery,
  type CreateResult,
  type ExpiredQuery,
  MAX_PAGE_SIZE,
  type Page,
  type PageRequest,
  type StateStore,
} from "../../ports/state-store.js";
import { NotFoundError, PreconditionFailedError } from "../../ports/store-errors.js";
import { decodeCursor, encodeCursor, type QueryName } from "./keyset-cursor.js";
import { fromDocument, toDocument } from "./state-document.js";

/** One paged query: its filter and the keyset it is ordered on, `(sortField, orderId)`. */
interface PagedQuery {
  readonly name: QueryName;
  readonly sortField: "notBefore" | "completeBy";
  readonly filter: string;
  readonly parameters: readonly SqlParameter[];
  /** Must equal a composite index of the container definition, path for path. */
  readonly orderBy: string;
}

/**
 * The state store on Cosmos DB: one item per order, `id` = `orderId` = partition key.
 *
 * Pages are keyset-ordered on (`notBefore`, `orderId`) or (`completeBy`, `orderId`), and the continuation
 * token is this store's own cursor, not the SDK's. A cursor resumes after the last item returned, whatever
 * changed since, which is the port's exactly-once rule; and a fresh query with `TOP` needs no SDK
 * continuation token, which the SDK accepts for cross-partition ORDER BY queries only with
 * `enableQueryControl`.
 */
export class CosmosStateStore implements StateStore {
  constructor(private readonly container: Container) {}

  async get(orderId: string): Promise<StoredStateRecord | undefined> {
    const { resource } = await this.container.item(orderId, orderId).read();
    return resource === undefined ? undefined : fromDocument(resource);
  }

  async createIfAbsent(record: StateRecord): Promise<CreateResult> {
    const document = toDocument(record);
    try {
      const { resource } = await this.container.items.create(document, {
        disableAutomaticIdGeneration: true,
      });
      return { created: true, record: fromDocument(resource) };
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
    const existing = await this.get(document.orderId);
    if (!existing) throw new Error(`state record ${document.orderId} vanished during create`);
    return { created: false, existing };
  }

  async replace(
    record: StateRecord,
    ifMatch: string,
  ): Promise<Result<StoredStateRecord, PreconditionFailedError | NotFoundError>> {
    const document = toDocument(record);
    try {
      const { resource } = await this.container
        .item(document.id, document.orderId)
        .replace(document, { accessCondition: { type: "IfMatch", condition: ifMatch } });
      return ok(fromDocument(resource));
    } catch (error) {
      const status = statusOf(error);
      if (status === 412) return err(new PreconditionFailedError(document.orderId, ifMatch));
      if (status === 404) return err(new NotFoundError(document.orderId));
      throw error;
    }
  }

  async countProcessing(): Promise<number> {
    const { resources } = await this.container.items
      .query<number>("SELECT VALUE COUNT(1) FROM c WHERE c.processState = 'Processing'")
      .fetchAll();
    return resources.reduce((sum, n) => sum + n, 0);
  }

  async queryClaimable(query: ClaimableQuery): Promise<Page<StoredStateRecord>> {
    return this.page(
      {
        name: "claimable",
        sortField: "notBefore",
        filter: "c.processState IN ('Pending', 'Compensating') AND c.lockedBy = null AND c.notBefore <= @now",
        parameters: [{ name: "@now", value: query.now }],
        // Two states match, so the due time must lead for "oldest first" across both.
        orderBy: "c.notBefore, c.orderId",
      },
      query,
    );
  }

  async queryExpired(query: ExpiredQuery): Promise<Page<StoredStateRecord>> {
    return this.page(
      {
        name: "expired",
        sortField: "completeBy",
        filter: "c.processState IN ('Processing', 'Compensating') AND c.completeBy <= @now",
        parameters: [{ name: "@now", value: query.now }],
        orderBy: "c.completeBy, c.orderId",
      },
      query,
    );
  }

  private async page(query: PagedQuery, request: PageRequest): Promise<Page<StoredStateRecord>> {
    checkPageSize(request.maxItems);
    const cursor = request.continuationToken ? decodeCursor(request.continuationToken, query.name) : null;
    // One item more than asked tells whether another page exists, so the last page ends with no token.
    const limit = request.maxItems + 1;
    const conditions = [query.filter];
    const parameters: SqlParameter[] = [...query.parameters, { name: "@limit", value: limit }];
    if (cursor) {
      const key = `c.${query.sortField}`;
      conditions.push(`(${key} > @afterKey OR (${key} = @afterKey AND c.orderId > @afterId))`);
      parameters.push(
        { name: "@afterKey", value: cursor.sortKey },
        { name: "@afterId", value: cursor.orderId },
      );
    }
    const spec = {
      query: `SELECT TOP @limit * FROM c WHERE ${conditions.join(" AND ")} ORDER BY ${query.orderBy}`,
      parameters,
    };

    const started = performance.now();
    const iterator = this.container.items.query(spec, { maxItemCount: limit });
    const resources: unknown[] = [];
    let requestUnits = 0;
    // Cosmos DB may return a round trip with fewer items than asked (or none); keep fetching.
    do {
      const response = await iterator.fetchNext();
      requestUnits += response.requestCharge;
      resources.push(...response.resources);
    } while (resources.length < limit && iterator.hasMoreResults());
    const durationMs = performance.now() - started;

    const items = resources.slice(0, request.maxItems).map(fromDocument);
    const last = items[items.length - 1];
    const continuationToken =
      resources.length > request.maxItems && last
        ? encodeCursor({
            query: query.name,
            sortKey: sortKeyOf(last, query.sortField),
            orderId: last.orderId,
          })
        : null;
    return {
      items,
      continuationToken,
      cost: { requestUnits, itemsReturned: items.length, documentsRead: resources.length, durationMs },
    };
  }
}

function sortKeyOf(record: StoredStateRecord, field: PagedQuery["sortField"]): string {
  const value = record[field];
  if (value === null) throw new Error(`state record ${record.orderId} matched with no ${field}`);
  return value;
}

function statusOf(error: unknown): unknown {
  return typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
}

function checkPageSize(maxItems: number): void {
  if (!Number.isInteger(maxItems) || maxItems < 1 || maxItems > MAX_PAGE_SIZE) {
    throw new RangeError(`maxItems must be an integer from 1 to ${MAX_PAGE_SIZE}; got ${maxItems}`);
  }
}
