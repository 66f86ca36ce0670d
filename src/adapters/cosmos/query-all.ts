import type { Container } from "@azure/cosmos";
import type { Meter } from "./recovery-index.js";

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
