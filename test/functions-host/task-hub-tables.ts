import { createHmac } from "node:crypto";

/** Azurite's development account: its key is public and works only against the emulator. */
const ACCOUNT = "devstoreaccount1";
const ACCOUNT_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export type TableRow = Readonly<Record<string, unknown>> & {
  readonly PartitionKey: string;
  readonly RowKey: string;
};

/**
 * Every row of a table on Azurite's table service (`tableEndpoint` ends with the account), read
 * through its REST API with the account's key (SharedKeyLite), page by page; an optional OData filter.
 */
export async function tableRows(tableEndpoint: string, table: string, filter?: string): Promise<TableRow[]> {
  const rows: TableRow[] = [];
  let next: { partition: string; row: string } | undefined;
  do {
    const url = new URL(`${tableEndpoint}/${table}()`);
    if (filter) url.searchParams.set("$filter", filter);
    if (next) {
      url.searchParams.set("NextPartitionKey", next.partition);
      url.searchParams.set("NextRowKey", next.row);
    }
    const date = new Date().toUTCString();
    const signature = createHmac("sha256", Buffer.from(ACCOUNT_KEY, "base64"))
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
    if (!response.ok) throw new Error(`${table}: ${response.status} ${await response.text()}`);
    rows.push(...((await response.json()) as { value: TableRow[] }).value);
    const partition = response.headers.get("x-ms-continuation-nextpartitionkey");
    const row = response.headers.get("x-ms-continuation-nextrowkey");
    next = partition && row ? { partition, row } : undefined;
  } while (next);
  return rows;
}
