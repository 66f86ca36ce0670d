/** One page of a keyset-ordered query of the state container, its cursor this store's own (keyset-cursor.ts). */
import { performance } from "node:perf_hooks";
import type { Container, SqlParameter } from "@azure/cosmos";
import type { StoredStateRecord } from "../../domain/state-record.js";
import type { Page, PageRequest } from "../../ports/state-store.js";
import { checkPageSize, decodeCursor, encodeCursor, type QueryName } from "./keyset-cursor.js";
import { fromDocument } from "./state-document.js";

/** A paged query of the state container: its filter and the keyset it is ordered on, `(sortField, orderId)`. */
export interface PagedQuery {
  readonly name: QueryName;
  readonly sortField: "notBefore" | "updatedAt";
  /** Newest first: the keyset runs downwards. */
  readonly descending?: boolean;
  readonly filter: string;
  readonly parameters: readonly SqlParameter[];
  /** Must equal a composite index of the container definition, path for path. */
  readonly orderBy: string;
}

/** The page `request` asks for; `seen` is told of each record read. */
export async function readPage(
  records: Container,
  query: PagedQuery,
  request: PageRequest,
  seen: (record: StoredStateRecord) => StoredStateRecord,
): Promise<Page<StoredStateRecord>> {
  checkPageSize(request.maxItems);
  const cursor = request.continuationToken ? decodeCursor(request.continuationToken, query.name) : null;
  // One item more than asked tells whether another page exists, so the last page ends with no token.
  const limit = request.maxItems + 1;
  const conditions = [query.filter];
  const parameters: SqlParameter[] = [...query.parameters, { name: "@limit", value: limit }];
  if (cursor) {
    const key = `c.${query.sortField}`;
    const beyond = query.descending ? "<" : ">";
    conditions.push(`(${key} ${beyond} @afterKey OR (${key} = @afterKey AND c.orderId ${beyond} @afterId))`);
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
  const iterator = records.items.query(spec, { maxItemCount: limit });
  const resources: unknown[] = [];
  let requestUnits = 0;
  // Cosmos DB may return a round trip with fewer items than asked (or none); keep fetching.
  do {
    const response = await iterator.fetchNext();
    requestUnits += response.requestCharge;
    resources.push(...response.resources);
  } while (resources.length < limit && iterator.hasMoreResults());
  const durationMs = performance.now() - started;

  const items = resources.slice(0, request.maxItems).map((resource) => seen(fromDocument(resource)));
  const last = items[items.length - 1];
  const continuationToken =
    resources.length > request.maxItems && last
      ? encodeCursor({
          query: query.name,
          sortKey: last[query.sortField],
          orderId: last.orderId,
        })
      : null;
  return {
    items,
    continuationToken,
    cost: { requestUnits, itemsReturned: items.length, documentsRead: resources.length, durationMs },
  };
}
