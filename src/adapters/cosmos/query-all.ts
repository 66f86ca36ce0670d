import type { Container } from "@azure/cosmos";

/** What a store's queries cost so far: request units, and the documents they read. */
export interface Meter {
  requestUnits: number;
  documentsRead: number;
}

export function newMeter(): Meter {
  return { requestUnits: 0, documentsRead: 0 };
}

/** Every result of a query, fetched page by page, its cost added to `meter`. */
export async function readAll<T>(container: Container, query: string, meter: Meter): Promise<T[]> {
  const iterator = container.items.query<T>(query);
  const found: T[] = [];
  do {
    const response = await iterator.fetchNext();
    meter.requestUnits += response.requestCharge;
    found.push(...response.resources);
  } while (iterator.hasMoreResults());
  meter.documentsRead += found.length;
  return found;
}
