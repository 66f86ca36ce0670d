import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { JsonAnswer } from "../src/adapters/web/json-response.js";
import { PARTNER_KEY_HEADER } from "./control-contract.js";

/**
 * The refusal of a request that does not carry the partner's access key (401) or carries another one
 * (403), or null when it may go on: always when no key is set. The keys are compared as SHA-256
 * digests in constant time, so neither their content nor their length shows in the time taken.
 */
export function accessRefusal(
  accessKey: string | undefined,
  headers: IncomingHttpHeaders,
): JsonAnswer | null {
  if (accessKey === undefined) return null;
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
  if (!timingSafeEqual(digest(presented), digest(accessKey))) {
    return {
      status: 403,
      body: {
        error: "forbidden",
        message: `the ${PARTNER_KEY_HEADER} header does not hold this partner's key`,
      },
    };
  }
  return null;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
