// npm run bench:supervisor [-- --sizes 10000,100000,1000000 --stores sqlite,cosmos --scans 9 --audit --json]
// What one Supervisor scan costs as the history grows: each store is seeded with N records of which
// 100 are expired and 200 in flight, and scanned as the Supervisor scans (the expired query, paged at
// SUPERVISOR_PAGE_SIZE, as of one instant). Reports per scan the records found, the documents read,
// the request units (Cosmos DB) and the time, and the ratio of the largest size's figures to the smallest's.
import { fork } from "node:child_process";
import type { CosmosConnection } from "../src/adapters/cosmos/cosmos-client.js";
import type { AuditReport } from "../src/adapters/cosmos/cosmos-state-store.js";
import { INTEGER_SETTINGS } from "../src/config/settings.js";
import type { IsoInstant } from "../src/domain/time.js";
import type { StateStore } from "../src/ports/state-store.js";
import { optionsOrExit } from "./bench-options.js";
import { EXPIRED, IN_FLIGHT } from "./seed-records.js";
import { type BenchOptions, parseOptions, type StoreName, USAGE } from "./supervisor-options.js";
import { type SeededStore, seedCosmos, seedSqlite } from "./supervisor-stores.js";

const PAGE_SIZE = INTEGER_SETTINGS.supervisorPageSize.defaultValue;

interface ScanFigures {
  readonly found: number;
  readonly pages: number;
  readonly documentsRead: number;
  readonly requestUnits: number;
  readonly ms: number;
}

interface Row {
  readonly store: StoreName;
  readonly size: number;
  readonly seedMs: number;
  readonly first: ScanFigures;
  /** The measured scans' figures, time as their median. */
  readonly scan: ScanFigures;
  readonly audit?: AuditReport;
}

/** One scan, page by page, as the Supervisor pages: every expired record must come back, once. */
async function scan(store: StateStore, now: IsoInstant): Promise<ScanFigures> {
  const seen = new Set<string>();
  let token: string | null = null;
  let pages = 0;
  let documentsRead = 0;
  let requestUnits = 0;
  const started = performance.now();
  do {
    const page = await store.queryExpired({ now, maxItems: PAGE_SIZE, continuationToken: token });
    for (const record of page.items) seen.add(record.orderId);
    documentsRead += page.cost.documentsRead;
    requestUnits += page.cost.requestUnits;
    token = page.continuationToken;
    pages++;
  } while (token);
  const ms = performance.now() - started;
  if (seen.size !== EXPIRED) throw new Error(`a scan found ${seen.size} expired records, not ${EXPIRED}`);
  return { found: seen.size, pages, documentsRead, requestUnits, ms };
}

/** The code paths of a store warmed up before the first size is measured, which would otherwise pay for it. */
const WARM_UP_SIZE = 1_000;

async function warmUp(seeded: SeededStore): Promise<void> {
  try {
    const now = new Date().toISOString();
    for (let i = 0; i < 20; i++) await scan(seeded.store, now);
  } finally {
    await seeded.dispose();
  }
}

async function measure(
  seeded: SeededStore,
  store: StoreName,
  size: number,
  now: IsoInstant,
  options: BenchOptions,
) {
  const audit = options.audit && seeded.audit ? await seeded.audit() : undefined;
  const scans = options.scans;
  const first = await scan(seeded.store, now);
  const measured: ScanFigures[] = [];
  for (let i = 0; i < scans; i++) measured.push(await scan(seeded.store, now));
  const times = measured.map((m) => m.ms).sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? 0;
  const last = measured[measured.length - 1] ?? first;
  const row: Row = { store, size, seedMs: seeded.seedMs, first, scan: { ...last, ms: median } };
  return audit ? { ...row, audit } : row;
}

/** The Cosmos DB stand-in in a child process with a heap for a million records. */
async function startStandIn(): Promise<{ connection: CosmosConnection; stop(): void }> {
  const child = fork(new URL("./cosmos-stand-in.ts", import.meta.url), {
    execArgv: [...process.execArgv, "--max-old-space-size=16384"],
    stdio: "inherit",
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message) => resolve((message as { port: number }).port));
    child.once("exit", (code) => reject(new Error(`the Cosmos DB stand-in exited with ${code}`)));
  });
  const endpoint = `https://127.0.0.1:${port}`;
  return {
    connection: { endpoint, key: "stand-in-accepts-any-key", allowSelfSignedCertificate: true },
    stop: () => child.kill(),
  };
}

const round = (x: number) => Math.round(x).toLocaleString("en-US");

const COLUMNS: readonly [string, number, (r: Row) => string][] = [
  ["store", 6, (r) => r.store],
  ["records", 9, (r) => round(r.size)],
  ["expired found", 13, (r) => String(r.scan.found)],
  ["pages", 5, (r) => String(r.scan.pages)],
  ["documents read", 14, (r) => round(r.scan.documentsRead)],
  ["request units", 13, (r) => (r.store === "cosmos" ? round(r.scan.requestUnits) : "-")],
  ["scan ms (median)", 16, (r) => r.scan.ms.toFixed(1)],
  ["first scan ms", 13, (r) => r.first.ms.toFixed(1)],
  ["seed s", 6, (r) => (r.seedMs / 1_000).toFixed(0)],
];

const AUDIT_COLUMNS: readonly [string, number, (r: Row) => string][] = [
  ["audit: documents", 16, (r) => (r.audit ? round(r.audit.documentsRead) : "-")],
  ["RU", 4, (r) => (r.audit ? round(r.audit.requestUnits) : "-")],
  ["ms", 7, (r) => (r.audit ? r.audit.durationMs.toFixed(0) : "-")],
];

function print(rows: readonly Row[], options: BenchOptions): void {
  const columns = options.audit ? [...COLUMNS, ...AUDIT_COLUMNS] : COLUMNS;
  console.log("");
  console.log(
    columns.map(([title, width], i) => (i === 0 ? title.padEnd(width) : title.padStart(width))).join("  "),
  );
  for (const row of rows) {
    console.log(
      columns
        .map(([, width, value], i) => (i === 0 ? value(row).padEnd(width) : value(row).padStart(width)))
        .join("  "),
    );
  }
  const smallest = Math.min(...options.sizes);
  const largest = Math.max(...options.sizes);
  if (smallest === largest) return;
  console.log("");
  console.log(`ratio of the figures at ${round(largest)} records to those at ${round(smallest)}:`);
  const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? "1.00" : "inf") : (a / b).toFixed(2));
  for (const store of options.stores) {
    const small = rows.find((r) => r.store === store && r.size === smallest)?.scan;
    const large = rows.find((r) => r.store === store && r.size === largest)?.scan;
    if (!small || !large) continue;
    const units =
      store === "cosmos" ? `, request units ${ratio(large.requestUnits, small.requestUnits)}` : "";
    console.log(
      `  ${store.padEnd(6)} documents read ${ratio(large.documentsRead, small.documentsRead)}${units}, scan time ${ratio(large.ms, small.ms)}`,
    );
  }
}

async function main(options: BenchOptions): Promise<void> {
  // With --json, stdout carries only the result; what is said along the way goes to stderr.
  const say = options.json ? (line: string) => console.error(line) : (line: string) => console.log(line);
  say(
    `Supervisor scan: ${EXPIRED} expired and ${IN_FLIGHT} in-flight records among N, page size ${PAGE_SIZE}, ${options.scans} scans measured after a first; each store warmed up on ${round(WARM_UP_SIZE)} records`,
  );
  say(`node ${process.version}, ${process.platform}/${process.arch}`);
  const standIn = options.stores.includes("cosmos") ? await startStandIn() : undefined;
  const rows: Row[] = [];
  try {
    for (const store of options.stores) {
      const seed = (size: number, now: IsoInstant) =>
        store === "sqlite"
          ? seedSqlite(size, now)
          : seedCosmos((standIn as { connection: CosmosConnection }).connection, size, now);
      await warmUp(await seed(WARM_UP_SIZE, new Date().toISOString()));
      for (const size of options.sizes) {
        const now = new Date().toISOString();
        const seeded = await seed(size, now);
        try {
          const row = await measure(seeded, store, size, now, options);
          rows.push(row);
          say(
            `${store} ${round(size)}: seeded in ${(seeded.seedMs / 1_000).toFixed(0)} s; ${seeded.plan}; scan ${row.scan.ms.toFixed(1)} ms`,
          );
        } finally {
          await seeded.dispose();
        }
      }
    }
  } finally {
    standIn?.stop();
  }
  if (options.json) {
    console.log(JSON.stringify({ pageSize: PAGE_SIZE, expired: EXPIRED, inFlight: IN_FLIGHT, rows }));
    return;
  }
  print(rows, options);
  if (options.stores.includes("cosmos")) {
    console.log("");
    console.log(
      "Cosmos DB figures are from the in-memory stand-in: it charges 1 RU a request and has no indexes.",
    );
    console.log(
      "The store's hourly audit (--audit) reads the state container's records in flight: served by the processState index on Cosmos DB, linear on the stand-in.",
    );
  }
}

await main(optionsOrExit(() => parseOptions(process.argv.slice(2)), USAGE));
