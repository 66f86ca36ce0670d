import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "../laptop/cli/usage-error.js";

export { UsageError };

/** The yardsticks `npm run bench` knows, in the order it runs them. */
export const YARDSTICKS = [
  "throughput",
  "latency",
  "runtime",
  "supervisor",
  "memory",
  "ceiling",
  "work",
  "engines",
] as const;
export type Yardstick = (typeof YARDSTICKS)[number];

export interface BenchOptions {
  /** Orders of each throughput run (the on-disk one is also the memory yardstick's) and of the work run's demo. */
  readonly orders: number;
  /** Orders the work yardstick sends through `sas host` on the Azure path. */
  readonly azureOrders: number;
  /** Orders of each run of the engines yardstick (`sas host` on each durable engine). */
  readonly engineOrders: number;
  /** Runs of each engine in the engines yardstick, taking turns: local, extension, local, extension, ... */
  readonly engineRounds: number;
  /** The open-loop send rates, orders per second. */
  readonly rates: readonly number[];
  /** How long the open loop sends at each rate. */
  readonly seconds: number;
  readonly only: readonly Yardstick[];
  /** Where the page and its JSON are written. */
  readonly out: string;
  /** Print the JSON instead of the table. */
  readonly json: boolean;
}

export const USAGE = [
  "usage: npm run bench -- [--orders <n>] [--azure-orders <n>] [--rates <n,...>] [--seconds <n>]",
  "                        [--engine-orders <n>] [--engine-rounds <n>]",
  "                        [--only <yardstick,...>] [--out <dir>] [--json]",
  "  --orders        orders of each throughput run and of the work run's demo, 1 to 1000000 (default 5000)",
  "  --azure-orders  orders the work run sends through sas host on the Azure path, 1 to 100000 (default 1000)",
  "  --engine-orders orders of each sas host run of the engines yardstick, 1 to 100000 (default 200)",
  "  --engine-rounds runs of each durable engine, taking turns, 1 to 10 (default 2)",
  "  --rates         open-loop send rates in orders/s, each 1 to 5000 (default 100,200,400)",
  "  --seconds       how long the open loop sends at each rate, 1 to 3600 (default 20)",
  `  --only          run only these: ${YARDSTICKS.join(", ")} (default all)`,
  "  --out           directory for the page and its JSON (default docs)",
  "  --json          print the JSON instead of the table",
  "Exits 0 when every yardstick ran and met its floor, 1 otherwise, 2 on bad flags; the engines",
  "yardstick without a .NET SDK 8 or later is reported as not run and fails nothing.",
].join("\n");

/** A bench script's flags, strictly: no positionals, and a UsageError for anything parseArgs refuses. */
export function parseFlags<const O extends NonNullable<ParseArgsConfig["options"]>>(
  args: readonly string[],
  options: O,
) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function parseBenchOptions(args: readonly string[]): BenchOptions {
  const values = parseFlags(args, {
    orders: { type: "string", default: "5000" },
    "azure-orders": { type: "string", default: "1000" },
    "engine-orders": { type: "string", default: "200" },
    "engine-rounds": { type: "string", default: "2" },
    rates: { type: "string", default: "100,200,400" },
    seconds: { type: "string", default: "20" },
    only: { type: "string", default: YARDSTICKS.join(",") },
    out: { type: "string", default: "docs" },
    json: { type: "boolean", default: false },
  });
  const names = values.only.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !(YARDSTICKS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new UsageError(`--only ${values.only}: unknown ${unknown.join(", ")}`);
  if (values.out.trim() === "") throw new UsageError("--out must name a directory");
  return {
    orders: integer("orders", values.orders, 1, 1_000_000),
    azureOrders: integer("azure-orders", values["azure-orders"], 1, 100_000),
    engineOrders: integer("engine-orders", values["engine-orders"], 1, 100_000),
    engineRounds: integer("engine-rounds", values["engine-rounds"], 1, 10),
    rates: parseRates(values.rates),
    seconds: integer("seconds", values.seconds, 1, 3_600),
    only: YARDSTICKS.filter((name) => names.includes(name)),
    out: values.out,
    json: values.json,
  };
}

/** `--rates`: distinct whole orders per second, in the order given. */
export function parseRates(raw: string): number[] {
  const rates = raw.split(",").map((part) => integer("rates", part.trim(), 1, 5_000));
  if (new Set(rates).size !== rates.length) throw new UsageError(`--rates ${raw}: a rate is given twice`);
  return rates;
}

export function integer(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new UsageError(`--${name} ${raw}: must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** A bench script's options, or its usage printed with the reason and exit 2 when its flags are bad. */
export function optionsOrExit<T>(parse: () => T, usage: string): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${usage}`);
    process.exit(2);
  }
}
