import { parseArgs } from "node:util";

/** The smoke test's command line: `npm run smoke -- [--store <url>] [--orders <n>] [...]`. */
export interface SmokeOptions {
  /** The storefront's base URL, without a trailing slash. */
  readonly store: string;
  readonly orders: number;
  readonly timeoutSeconds: number;
  readonly seed: number;
  readonly concurrency: number;
}

/** Where `npm start` and `npm run host` serve the storefront. */
export const LOCAL_STORE = "http://127.0.0.1:7080";

export const USAGE = `usage: npm run smoke -- [--store <url>] [--orders <n>] [--timeout-seconds <s>] [--seed <n>]
                       [--concurrency <n>]

Places orders through a storefront's HTTP API, as a shopper does, and follows each until the
Scheduler's status messages have brought it to a final state (Processed, Error, Compensated,
CompensationFailed).

  --store <url>           the storefront: https://..., or http:// on loopback only
                          (default ${LOCAL_STORE}, where npm start and npm run host serve it)
  --orders <n>            orders to place, 1 to 10000 (default 10)
  --timeout-seconds <s>   how long every order has to reach a final state, 1 to 86400 (default 300)
  --seed <n>              seed of the carts' products and quantities (default 1)
  --concurrency <n>       orders placed at the same time, 1 to 32 (default 4)

Exit status: 0 when every order reached a final state, 1 when one did not (they are named) or the
store could not be used, 2 on a bad command line.`;

export class UsageError extends Error {
  override readonly name = "UsageError";
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Parses the flags; throws a UsageError naming the problem. */
export function parseSmokeOptions(args: readonly string[]): SmokeOptions {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: [...args],
      strict: true,
      options: {
        store: { type: "string" },
        orders: { type: "string" },
        "timeout-seconds": { type: "string" },
        seed: { type: "string" },
        concurrency: { type: "string" },
      },
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return {
    store: storeUrl(values.store ?? LOCAL_STORE),
    orders: integerIn(values, "orders", 10, 1, 10_000),
    timeoutSeconds: integerIn(values, "timeout-seconds", 300, 1, 86_400),
    seed: integerIn(values, "seed", 1, -(2 ** 31), 2 ** 31 - 1),
    concurrency: integerIn(values, "concurrency", 4, 1, 32),
  };
}

/**
 * An https URL, or an http one on loopback: orders placed in plain text across a network could be
 * read or changed on the way. Credentials in the URL are refused, since the report prints it.
 */
function storeUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--store must be a URL; got ${raw}`);
  }
  const plainLoopback = url.protocol === "http:" && LOOPBACK.has(url.hostname);
  if (url.protocol !== "https:" && !plainLoopback) {
    throw new UsageError(
      `--store must be an https URL, or http on loopback (127.0.0.1, localhost, [::1]); got ${raw}`,
    );
  }
  if (url.username || url.password) throw new UsageError("--store must not carry a user name or password");
  if (url.search || url.hash)
    throw new UsageError(`--store must be the storefront's base URL, without ? or #; got ${raw}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

function integerIn(
  values: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}; got ${raw}`);
  }
  return Number(raw);
}
