/**
 * Rows of a table on Azurite's table service (the task hub's History, Instances and Partitions), read
 * through its REST API with the development account's key (SharedKeyLite), page by page.
 */
import { createHmac } from "node:crypto";
import { AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY } from "./azurite.js";

export type TableRow = Readonly<Record<string, unknown>>;

export interface TableQuery {
  /** An OData filter, e.g. `PartitionKey eq 'ord-1:1'`. */
  readonly filter?: string;
  /** The columns to read, comma-separated. */
  readonly select?: string;
}

/** Every row of `table` at `tableEndpoint` (which ends with the account); none when there is no such table. */
export async function tableRows(
  tableEndpoint: string,
  table: string,
  query: TableQuery = {},
): Promise<TableRow[]> {
  const rows: TableRow[] = [];
  let next: { partition: string; row: string } | undefined;
  do {
    const url = new URL(`${tableEndpoint}/${table}()`);
    if (query.filter) url.searchParams.set("$filter", query.filter);
    if (query.select) url.searchParams.set("$select", query.select);
    if (next) {
      url.searchParams.set("NextPartitionKey", next.partition);
      url.searchParams.set("NextRowKey", next.row);
    }
    const response = await fetch(url, { headers: signedHeaders(url) });
    if (response.status === 404) return [];
    if (!response.ok) throw new Error(`${table}: ${response.status} ${await response.text()}`);
    rows.push(...((await response.json()) as { value: TableRow[] }).value);
    const partition = response.headers.get("x-ms-continuation-nextpartitionkey");
    const row = response.headers.get("x-ms-continuation-nextrowkey");
    next = partition && row ? { partition, row } : undefined;
  } while (next);
  return rows;
}

function signedHeaders(url: URL): Record<string, string> {
  const date = new Date().toUTCString();
  const signature = createHmac("sha256", Buffer.from(AZURITE_ACCOUNT_KEY, "base64"))
    .update(`${date}\n/${AZURITE_ACCOUNT}${url.pathname}`)
    .digest("base64");
  return {
    accept: "application/json;odata=nometadata",
    "x-ms-version": "2019-02-02",
    "x-ms-date": date,
    authorization: `SharedKeyLite ${AZURITE_ACCOUNT}:${signature}`,
  };
}
