import { parseArgs } from "node:util";
import { UsageError } from "./bench-options.js";

export const STORES = ["sqlite", "cosmos"] as const;
export type StoreName = (typeof STORES)[number];

export interface BenchOptions {
  readonly sizes: readonly number[];
  readonly stores: readonly StoreName[];
  /** Scans measured per store and size, after a first one. */
  readonly scans: number;
  /** Also time the Cosmos DB store's hourly audit of its recovery index, once per size. */
  readonly audit: boolean;
  /** Print one JSON object on stdout (progress goes to stderr) instead of the table. */
  readonly json: boolean;
}

export const USAGE = [
  "usage: npm run bench:supervisor -- [--sizes <n,...>] [--stores <store,...>] [--scans <n>] [--audit] [--json]",
  "  --sizes   records to seed, each 1000 to 1000000 (default 10000,100000,1000000)",
  `  --stores  ${STORES.join(", ")} (default both)`,
  "  --scans   scans measured per store and size, 1 to 100 (default 9)",
  "  --audit   also time the Cosmos DB store's hourly audit, which reads the state container",
  "            (linear on the stand-in, about 1 ms a record: leave it out at 100000 and above)",
  "  --json    print one JSON object instead of the table",
].join("\n");

export { UsageError };

export function parseOptions(args: readonly string[]): BenchOptions {
  let values: { sizes: string; stores: string; scans: string; audit: boolean; json: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        sizes: { type: "string", default: "10000,100000,1000000" },
        stores: { type: "string", default: STORES.join(",") },
        scans: { type: "string", default: "9" },
        audit: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const sizes = values.sizes.split(",").map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1_000 || n > 1_000_000)) {
    throw new UsageError(`--sizes ${values.sizes}: each must be an integer from 1000 to 1000000`);
  }
  const stores = values.stores.split(",").map((s) => s.trim());
  const unknown = stores.filter((s) => !(STORES as readonly string[]).includes(s));
  if (unknown.length > 0 || stores.length === 0) {
    throw new UsageError(`--stores ${values.stores}: unknown ${unknown.join(", ")}`);
  }
  const scans = Number(values.scans);
  if (!Number.isInteger(scans) || scans < 1 || scans > 100) {
    throw new UsageError(`--scans ${values.scans}: must be an integer from 1 to 100`);
  }
  return { sizes, stores: stores as StoreName[], scans, audit: values.audit, json: values.json };
}
