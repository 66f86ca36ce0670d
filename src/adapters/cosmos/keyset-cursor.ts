import { MAX_PAGE_SIZE } from "../../ports/state-store.js";
import { InvalidContinuationTokenError } from "../../ports/store-errors.js";

export type QueryName = "claimable" | "expired" | `recent:${string}`;

/** Where a page stopped: the last item's sort key and orderId, for the query that issued it. */
export interface Cursor {
  readonly query: QueryName;
  readonly sortKey: string;
  readonly orderId: string;
}

const VERSION = 1;

export function encodeCursor(cursor: Cursor): string {
  const parts = [VERSION, cursor.query, cursor.sortKey, cursor.orderId];
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

export function decodeCursor(token: string, expected: QueryName): Cursor {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw new InvalidContinuationTokenError("not a token issued by this store");
  }
  if (
    !Array.isArray(parts) ||
    parts.length !== 4 ||
    parts[0] !== VERSION ||
    !parts.slice(1).every((p) => typeof p === "string")
  ) {
    throw new InvalidContinuationTokenError("not a token issued by this store");
  }
  const [, query, sortKey, orderId] = parts as [number, string, string, string];
  if (query !== expected) {
    throw new InvalidContinuationTokenError(`issued for the ${query} query, not ${expected}`);
  }
  return { query, sortKey, orderId };
}

export function checkPageSize(maxItems: number): void {
  if (!Number.isInteger(maxItems) || maxItems < 1 || maxItems > MAX_PAGE_SIZE) {
    throw new RangeError(`maxItems must be an integer from 1 to ${MAX_PAGE_SIZE}; got ${maxItems}`);
  }
}
