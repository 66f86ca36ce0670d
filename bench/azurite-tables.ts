/**
 * Rows of a table on Azurite's table service, read directly (not through the counting proxy) with the
 * development account's public key (SharedKeyLite), page by page: the task hub's History and Instances.
 */
import { createHmac } from "node:crypto";
import { AZURITE_KEY } from "./azure-work.js";

const ACCOUNT = "devstoreaccount1";

export type TableRow = Readonly<Record<string, unknown>>;

/** Every row of `table` at `tableEndpoint` (which ends with the account), optionally only some columns. */
export async function tableRows(tableEndpoint: string, table: string, select?: string): Promise<TableRow[]> {
  const rows: TableRow[] = [];
  let next: { partition: string; row: string } | undefined;
  do {
    const url = new URL(`${tableEndpoint}/${table}()`);
    if (select) url.searchParams.set("$select", select);
    if (next) {
      url.searchParams.set("NextPartitionKey", next.partition);
      url.searchParams.set("NextRowKey", next.row);
    }
    const date = new Date().toUTCString();
    const signature = createHmac("sha256", Buffer.from(AZURITE_KEY, "base64"))
      .update(`${date}\n/${ACCOUNT}${url.pathname}`)
      .digest("base64");
    const response = await fetch(url, {
      headers: {
        accept: "application/json;odata=nometadata",
        "x-ms-version": "2019-02-02",
        "x-ms-date": date,
        authorization: `SharedKeyLite ${ACCOUNT}:${signature}`,
      },
    });
    if (response.status === 404) return [];
    if (!response.ok) throw new Error(`${table}: ${response.status} ${await response.text()}`);
    rows.push(...((await response.json()) as { value: TableRow[] }).value);
    const partition = response.headers.get("x-ms-continuation-nextpartitionkey");
    const row = response.headers.get("x-ms-continuation-nextrowkey");
    next = partition && row ? { partition, row } : undefined;
  } while (next);
  return rows;
}
