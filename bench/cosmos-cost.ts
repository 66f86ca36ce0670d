/**
 * An estimate of the request units (RU) Azure Cosmos DB would charge for a request, from Microsoft's
 * published cost model. It is an estimate, never a measurement: the stand-in charges a flat 1 RU a
 * request, and the service's own figures "are illustrative ... and can change over time".
 *
 * Sources (Microsoft Learn, Azure Cosmos DB):
 * - "Understand request units consumption"
 *   (https://learn.microsoft.com/azure/cosmos-db/understand-request-unit-consumption): point reads and
 *   writes by document size (the table below); a create costs the size-based charge plus 0.2 RU per
 *   indexed term; a replace deletes and inserts (twice the size-based charge) plus 0.2 RU for each
 *   modified indexed term removed and 0.2 for each added; a patch costs a replace plus 0.4 RU per
 *   modified property; a delete costs the size-based charge plus 0.2 RU per indexed term removed.
 * - "Optimize request cost in Azure Cosmos DB"
 *   (https://learn.microsoft.com/azure/cosmos-db/optimize-cost-reads-writes): a query returning 1,000
 *   items of 1 KB costs about 1,000 RU, and its sample query metrics show one item of 9,963 bytes
 *   returned for 3.19 RU. A query is taken here as a fixed 1.8 RU, fitted to that sample, plus a point
 *   read of each item it returns: 2.8 RU for one small item, about 1,000 for 1,000 of 1 KB.
 *
 * Taken as assumptions, the model being silent on them: a request the service refuses (a 412 on a
 * stale ETag, a 409 on an existing id, a 404 on a missing item) costs as a point read of 1 KB, the
 * service having looked the item up; metadata requests (account, database, container, partition key
 * ranges) cost nothing, being served from the system's own budget, not the container's throughput.
 */

const KB = 1024;

/** Document size in KB, and the RU of a point read and of a write's size-based part at that size. */
const SIZE_TABLE: readonly (readonly [kb: number, read: number, write: number])[] = [
  [1, 1.0, 4.95],
  [2, 1.04, 6.29],
  [4, 1.14, 6.67],
  [8, 1.33, 7.04],
  [16, 1.67, 9.52],
  [32, 2.19, 11.23],
  [64, 4.76, 22.67],
  [128, 9.95, 48.19],
  [256, 20.28, 98.29],
  [512, 40.95, 184.57],
  [1024, 145.9, 625.0],
  [2048, 291.8, 1250.0],
];

export const RU_PER_INDEXED_TERM = 0.2;
export const RU_PER_PATCHED_PROPERTY = 0.4;
/** A query's charge before the items it returns, each of which costs as a point read of its size. */
export const QUERY_BASE_RU = 1.8;
/** A refused request (412, 409, 404): a point read of 1 KB. */
export const REFUSED_RU = 1;

/** Linear between the table's sizes; a document under 1 KB costs as one of 1 KB, one over 2 MB pro rata. */
function bySize(bytes: number, column: 1 | 2): number {
  const kb = Math.max(1, bytes / KB);
  const first = SIZE_TABLE[0] as (typeof SIZE_TABLE)[number];
  const last = SIZE_TABLE[SIZE_TABLE.length - 1] as (typeof SIZE_TABLE)[number];
  if (kb <= first[0]) return first[column];
  if (kb >= last[0]) return (last[column] * kb) / last[0];
  const upper = SIZE_TABLE.findIndex(([size]) => size >= kb);
  const high = SIZE_TABLE[upper] as (typeof SIZE_TABLE)[number];
  const low = SIZE_TABLE[upper - 1] as (typeof SIZE_TABLE)[number];
  return low[column] + ((high[column] - low[column]) * (kb - low[0])) / (high[0] - low[0]);
}

/** A point read of a document of `bytes`. */
export function pointReadUnits(bytes: number): number {
  return bySize(bytes, 1);
}

/** The size-based part of writing (or deleting) a document of `bytes`, before its index terms. */
export function documentWriteUnits(bytes: number): number {
  return bySize(bytes, 2);
}

/** What one request did, as far as the model prices it. */
export type CostedRequest =
  | { readonly operation: "read"; readonly bytes: number }
  | { readonly operation: "create"; readonly bytes: number; readonly indexedTerms: number }
  | {
      readonly operation: "replace";
      /** The document replaced, as far as it is known (else taken as the same size as the new one). */
      readonly previousBytes: number;
      readonly bytes: number;
      /** Index terms removed and added (a changed value is one of each). */
      readonly termChanges: number;
    }
  | {
      readonly operation: "patch";
      readonly bytes: number;
      readonly termChanges: number;
      readonly patchedProperties: number;
    }
  | { readonly operation: "delete"; readonly bytes: number; readonly indexedTerms: number }
  | {
      readonly operation: "query";
      /** The size of each item (or value) it returned. */
      readonly itemBytes: readonly number[];
    }
  | { readonly operation: "refused" }
  | { readonly operation: "metadata" };

export function requestUnits(request: CostedRequest): number {
  switch (request.operation) {
    case "read":
      return pointReadUnits(request.bytes);
    case "create":
      return documentWriteUnits(request.bytes) + RU_PER_INDEXED_TERM * request.indexedTerms;
    case "replace":
      return replaceUnits(request.previousBytes, request.bytes, request.termChanges);
    case "patch":
      return (
        replaceUnits(request.bytes, request.bytes, request.termChanges) +
        RU_PER_PATCHED_PROPERTY * request.patchedProperties
      );
    case "delete":
      return documentWriteUnits(request.bytes) + RU_PER_INDEXED_TERM * request.indexedTerms;
    case "query":
      return request.itemBytes.reduce((sum, bytes) => sum + pointReadUnits(bytes), QUERY_BASE_RU);
    case "refused":
      return REFUSED_RU;
    case "metadata":
      return 0;
  }
}

/** The old document deleted and the new one inserted, and the terms that changed removed and added. */
function replaceUnits(previousBytes: number, bytes: number, termChanges: number): number {
  return documentWriteUnits(previousBytes) + documentWriteUnits(bytes) + RU_PER_INDEXED_TERM * termChanges;
}
