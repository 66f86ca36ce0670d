import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { JsonAnswer } from "../src/adapters/web/json-response.js";
import { PARTNER_KEY_HEADER } from "./control-contract.js";

/** Answers whether a request may go on: null when it may, else the refusal to send. */
export type AccessGuard = (headers: IncomingHttpHeaders) => JsonAnswer | null;

/**
 * The guard of a partner with `accessKey` (every request may go on when there is none): it refuses a
 * request that does not carry the key (401) or carries another one (403). The keys are compared as
 * SHA-256 digests in constant time, so neither their content nor their length shows in the time
 * taken. The partner's own key is digested once, when the guard is made.
 */
export function accessGuard(accessKey: string | undefined): AccessGuard {
  if (accessKey === undefined) return () => null;
  const expected = digest(accessKey);
  return (headers) => {
    const header = headers[PARTNER_KEY_HEADER];
    const presented = Array.isArray(header) ? header.join(", ") : header;
    if (presented === undefined || presented === "") {
      return {
        status: 401,
        body: {
          error: "unauthenticated",
          message: `this partner needs its access key in the ${PARTNER_KEY_HEADER} header`,
        },
      };
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      return {
        status: 403,
        body: {
          error: "forbidden",
          message: `the ${PARTNER_KEY_HEADER} header does not hold this partner's key`,
        },
      };
    }
    return null;
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
