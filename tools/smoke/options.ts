import { parseArgs } from "node:util";

/** The smoke test's command line: `npm run smoke -- [--store <url>] [--orders <n>] [...]`. */
export interface SmokeOptions {
  /** The storefront's base URL, without a trailing slash. */
  readonly store: string;
  readonly orders: number;
  readonly timeoutSeconds: number;
  readonly seed: number;
  readonly concurrency: number;
  /** `--outage`: take the partner down mid-run through the operator API; null without the flag. */
  readonly outage: OutageOptions | null;
}

export interface OutageOptions {
  readonly seconds: number;
  /** The operator API's root (the host, without /api), without a trailing slash. */
  readonly api: string;
  /** The admin key of the Functions app (sent as x-functions-key). */
  readonly key?: string;
  /** The embedded host's API token (sent as Authorization: Bearer). */
  readonly token?: string;
}

/** Where `npm start` and `npm run host` serve the storefront. */
export const LOCAL_STORE = "http://127.0.0.1:7080";

/** Where `npm start` serves the operator API. */
export const LOCAL_API = "http://127.0.0.1:7071";

export const USAGE = `usage: npm run smoke -- [--store <url>] [--orders <n>] [--timeout-seconds <s>] [--seed <n>]
                       [--concurrency <n>] [--outage <s> [--api <url>] [--key <key> | --token <token>]]

Places orders through a storefront's HTTP API, as a shopper does, and follows each until the
Scheduler's status messages have brought it to a final state (Processed, Error, Compensated,
CompensationFailed).

  --store <url>           the storefront: https://..., or http:// on loopback only
                          (default ${LOCAL_STORE}, where npm start and npm run host serve it)
  --orders <n>            orders to place, 1 to 10000 (default 10)
  --timeout-seconds <s>   how long every order has to reach a final state, 1 to 86400 (default 300)
  --seed <n>              seed of the carts' products and quantities (default 1)
  --concurrency <n>       orders placed at the same time, 1 to 32 (default 4)
  --outage <s>            once a third of the orders are placed, take the simulated partner down for
                          this many seconds, 1 to 3600, through the operator API
                          (POST /api/partner/outage); every order must still reach a final state
                          after it is back, within --timeout-seconds plus the outage
  --api <url>             the operator API's host for --outage: https://..., or http:// on loopback
                          (default ${LOCAL_API}, where npm start serves it)
  --key <key>             for --outage against the Functions app in Azure: its admin key
  --token <token>         for --outage against an embedded host started with --api-token

Exit status: 0 when every order reached a final state (and, with --outage, the partner went down and
came back), 1 when one did not (they are named), the store could not be used or the partner could
not be taken down, 2 on a bad command line.`;

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
        outage: { type: "string" },
        api: { type: "string" },
        key: { type: "string" },
        token: { type: "string" },
      },
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return {
    store: baseUrl("store", values.store ?? LOCAL_STORE, "the storefront's"),
    orders: integerIn(values, "orders", 10, 1, 10_000),
    timeoutSeconds: integerIn(values, "timeout-seconds", 300, 1, 86_400),
    seed: integerIn(values, "seed", 1, -(2 ** 31), 2 ** 31 - 1),
    concurrency: integerIn(values, "concurrency", 4, 1, 32),
    outage: outageFrom(values),
  };
}

/** --outage and what reaches the operator API; --api, --key and --token mean nothing without it. */
function outageFrom(values: Record<string, string | undefined>): OutageOptions | null {
  if (values.outage === undefined) {
    const stray = (["api", "key", "token"] as const).find((name) => values[name] !== undefined);
    if (stray) throw new UsageError(`--${stray} is for --outage <s>, which was not given`);
    return null;
  }
  for (const name of ["key", "token"] as const) {
    if (values[name] !== undefined && values[name]?.trim() === "") {
      throw new UsageError(`--${name} must not be empty`);
    }
  }
  return {
    seconds: integerIn(values, "outage", 0, 1, 3600),
    api: baseUrl("api", values.api ?? LOCAL_API, "the operator API's"),
    ...(values.key !== undefined ? { key: values.key } : {}),
    ...(values.token !== undefined ? { token: values.token } : {}),
  };
}

/**
 * An https URL, or an http one on loopback: orders and keys sent in plain text across a network could
 * be read or changed on the way. Credentials in the URL are refused, since the report prints it.
 */
function baseUrl(flag: string, raw: string, whose: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--${flag} must be a URL; got ${raw}`);
  }
  const plainLoopback = url.protocol === "http:" && LOOPBACK.has(url.hostname);
  if (url.protocol !== "https:" && !plainLoopback) {
    throw new UsageError(
      `--${flag} must be an https URL, or http on loopback (127.0.0.1, localhost, [::1]); got ${raw}`,
    );
  }
  if (url.username || url.password) throw new UsageError(`--${flag} must not carry a user name or password`);
  if (url.search || url.hash)
    throw new UsageError(`--${flag} must be ${whose} base URL, without ? or #; got ${raw}`);
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
